package dev.fence.hook;

import dev.fence.core.Landings;
import dev.fence.core.Names;
import dev.fence.core.ObjectIds;
import dev.fence.core.Reason;
import dev.fence.core.RefUpdate;
import dev.fence.core.StoreUnavailableException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The repository's list of admitted ref updates whose landing is not known yet ({@link
 * Landings.Pending}), in {@code <GIT_DIR>/fence/pending}, each with the {@code git receive-pack} process
 * that received it. The pre-receive hook adds its admitted updates; a hook that later finds an update's
 * ref at its new id applies the landing, and one that finds the receiving process gone and the ref
 * elsewhere records that it did not land. Read and written only under the lock of the repository's
 * record ({@link HostRecord}).
 *
 * <p>Not thread-safe: one per hook run, under that lock.
 */
final class PendingLandings {
    private static final String VERSION = "v1";

    /**
     * An admitted update and the process that received it.
     *
     * @param pid the {@code git receive-pack} process (or the hook's parent when none is found)
     * @param started that process's start ({@link ProcessTable#started}), so that a reused pid is not taken
     *     for it
     */
    record Entry(long pid, long started, Landings.Pending pending) {
        /** True while the receiving process still runs: its updates may still land. */
        boolean inFlight() {
            long now = ProcessTable.started(pid);
            return now != -1 && (now == started || now == 0);
        }
    }

    private final Path file;

    private PendingLandings(Path file) {
        this.file = file;
    }

    static PendingLandings of(Path gitDir) {
        return new PendingLandings(gitDir.resolve("fence").resolve("pending"));
    }

    /** The entries, oldest first; none when the file does not exist. */
    List<Entry> read() {
        String text;
        try {
            byte[] bytes = SmallFiles.readIfExists(file, Long.MAX_VALUE);
            if (bytes == null) {
                return List.of();
            }
            text = new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new StoreUnavailableException("cannot read the repository's pending landings " + file + ": " + e);
        }
        List<Entry> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            try {
                out.add(parse(line));
            } catch (RuntimeException e) {
                // A damaged line is dropped: it can only delay a landing's record, never admit a push.
            }
        }
        return out;
    }

    /** Replaces the entries (removes the file when there are none). */
    void write(List<Entry> entries) {
        try {
            if (entries.isEmpty()) {
                Files.deleteIfExists(file);
                return;
            }
            StringBuilder b = new StringBuilder();
            for (Entry e : entries) {
                b.append(format(e)).append('\n');
            }
            SmallFiles.replace(file, b.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new StoreUnavailableException("cannot write the repository's pending landings " + file + ": " + e);
        }
    }

    /**
     * The entries for {@code pending}, received by the {@code git receive-pack} this hook runs under: the
     * nearest ancestor process whose command is git's (a launcher script or Gitea's dispatcher may stand
     * between), else the hook's parent.
     */
    static List<Entry> received(List<Landings.Pending> pending) {
        long pid = receiverPid();
        long started = pid == -1 ? 0 : Math.max(0, ProcessTable.started(pid));
        List<Entry> out = new ArrayList<>();
        for (Landings.Pending x : pending) {
            out.add(new Entry(pid, started, x));
        }
        return out;
    }

    /** The pid of the {@code git receive-pack} this hook runs under (see {@link #received}), or -1. */
    static long receiverPid() {
        long first = ProcessTable.parent(ProcessTable.self());
        long p = first;
        for (int i = 0; p > 0 && i < 6; i++) {
            String name = ProcessTable.command(p);
            if (name.equals("git") || name.startsWith("git-")) {
                return p;
            }
            p = ProcessTable.parent(p);
        }
        return first;
    }

    private static String format(Entry e) {
        Landings.Pending p = e.pending();
        RefUpdate u = p.update();
        return String.join(
                " ",
                VERSION,
                Long.toString(e.pid()),
                Long.toString(e.started()),
                p.reason().code(),
                Long.toString(p.token()),
                u.oldId(),
                u.newId(),
                p.holder() == null ? "-" : b64(p.holder()),
                b64(p.pusher()),
                Long.toString(p.decidedAt().toEpochMilli()),
                b64(p.repoId()),
                b64(p.resource()),
                u.ref());
    }

    private static Entry parse(String line) {
        String[] f = line.split(" ", -1);
        if (f.length != 13 || !f[0].equals(VERSION) || !ObjectIds.isValid(f[5]) || !ObjectIds.isValid(f[6])) {
            throw new IllegalArgumentException("not a pending landing");
        }
        Reason reason = Reason.fromCode(f[3]);
        return new Entry(
                Long.parseLong(f[1]),
                Long.parseLong(f[2]),
                new Landings.Pending(
                        reason,
                        Names.require("resource", unb64(f[11])),
                        Names.require("repo id", unb64(f[10])),
                        new RefUpdate(f[5], f[6], f[12]),
                        Long.parseLong(f[4]),
                        f[7].equals("-") ? null : Names.require("holder", unb64(f[7])),
                        Names.require("pusher", unb64(f[8])),
                        Instant.ofEpochMilli(Long.parseLong(f[9]))));
    }

    private static String b64(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String unb64(String s) {
        return new String(Base64.getUrlDecoder().decode(s), StandardCharsets.UTF_8);
    }
}
