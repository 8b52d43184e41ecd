package dev.fence.doctor;

import dev.fence.store.StoreSetup;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Judges a SQLite store's file: it, its {@code -wal} and {@code -shm} companions and its directory must be
 * writable by the user fence runs as. A file that another user created (root running a hook by hand, an
 * install step under the wrong account) is the common failure: hooks then fail at their first write
 * ({@code sqlite.file}). And no other user of the host may read them, since they hold the proof key
 * ({@code sqlite.others}).
 */
final class SqliteJudge {
    private SqliteJudge() {}

    /** @param user the user fence runs as, or null when it cannot be told */
    static List<Finding> judge(StoreSetup.Sqlite s, UserPrincipal user) {
        return judge(s, user, null);
    }

    /**
     * @param user the user fence runs as, or null when it cannot be told
     * @param hook the user the hooks run as, when known and not {@code user}: the files are judged for it,
     *     from their owners and modes (root running the check may write what the hooks' user may not)
     */
    static List<Finding> judge(StoreSetup.Sqlite s, UserPrincipal user, Account hook) {
        List<Finding> out = new ArrayList<>();
        out.add(writable(s, user, hook));
        if (Files.isRegularFile(s.file())) {
            out.add(others(s.file()));
        }
        return out;
    }

    /**
     * Whether every user on the host may read (or write) the file or the {@code -wal} and {@code -shm} files
     * beside it: the file holds the proof key, with which anyone can make any holder's proof and push as it.
     * A warning, not a failure: fence works, and the file's group is left to the operator (a store shared by
     * a group on purpose); only others' access is named.
     */
    private static Finding others(Path file) {
        List<Path> files = new ArrayList<>(List.of(file));
        files.addAll(companions(file));
        List<String> open = new ArrayList<>();
        int othersMay = 0;
        for (Path p : files) {
            int bits = othersBits(p);
            if (bits != 0) {
                open.add(p.toString());
                othersMay |= bits;
            }
        }
        String access = othersMay == 0006 ? "readable and writable" : othersMay == 0004 ? "readable" : "writable";
        String modes = Account.describe(file);
        if (open.isEmpty()) {
            return Finding.ok(
                    StoreChecks.OTHERS,
                    file + " (it holds the proof key) is not open to other users"
                            + (modes == null ? "" : " (" + modes + ")"));
        }
        return Finding.warn(
                StoreChecks.OTHERS,
                String.join(", ", open) + " " + (open.size() == 1 ? "is " : "are ") + access + " by every user on"
                        + " this host" + (modes == null ? "" : " (the file is " + modes + ")") + ": the store holds"
                        + " the proof key, with which any of them can make a holder's proof and push as that holder",
                "chmod o-rwx " + String.join(" ", open));
    }

    /** Those of the file's {@code -wal} and {@code -shm} files that exist. */
    private static List<Path> companions(Path file) {
        List<Path> out = new ArrayList<>();
        for (String suffix : List.of("-wal", "-shm")) {
            Path companion = file.resolveSibling(file.getFileName() + suffix);
            if (Files.exists(companion)) {
                out.add(companion);
            }
        }
        return out;
    }

    /** The read and write bits the file's mode gives others (0004, 0002), or 0 when it cannot be read. */
    private static int othersBits(Path p) {
        try {
            return (Integer) Files.getAttribute(p, "unix:mode") & 0006;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return 0;
        }
    }

    private static Finding writable(StoreSetup.Sqlite s, UserPrincipal user, Account hook) {
        boolean forHook = hook != null && (user == null || !hook.name().equals(user.getName()));
        Predicate<Path> writable = forHook ? hook::canWrite : Files::isWritable;
        String who = forHook ? hook.name() + " (the hooks' user)" : name(user);
        String whoName = forHook ? hook.name() : user == null ? null : user.getName();
        boolean whoIsRoot = forHook ? hook.isRoot() : "root".equals(whoName);
        Path file = s.file();
        Path dir = file.getParent();
        if (!Files.exists(file)) {
            Path existing = dir;
            while (existing != null && !Files.exists(existing)) {
                existing = existing.getParent();
            }
            if (existing == null || !Files.isDirectory(existing) || !writable.test(existing)) {
                return Finding.fail(
                        StoreChecks.SQLITE,
                        file + " does not exist, and " + (existing == null ? dir : existing) + " is not a directory "
                                + who + " can write: fence cannot create it",
                        "create " + dir + " owned by the user the hooks run as (e.g. install -d -o git " + dir + ")");
            }
            return Finding.ok(
                    StoreChecks.SQLITE,
                    file + " does not exist yet: the first fence call creates it, owned by the user who makes it,"
                            + " readable by that user only (mode 0600)");
        }
        List<String> unwritable = new ArrayList<>();
        if (!Files.isRegularFile(file)) {
            return Finding.fail(
                    StoreChecks.SQLITE, file + " is not a regular file", "point the store URL at a SQLite file");
        }
        if (!writable.test(file)) {
            unwritable.add(file.toString());
        }
        for (Path companion : companions(file)) {
            if (!writable.test(companion)) {
                unwritable.add(companion.toString());
            }
        }
        // SQLite creates the -wal and -shm files (and a journal) beside the database as it goes.
        if (dir != null && !writable.test(dir)) {
            unwritable.add(dir + " (the directory)");
        }
        String owner = owner(file);
        if (!unwritable.isEmpty()) {
            String modes = Account.describe(file);
            return Finding.fail(
                    StoreChecks.SQLITE,
                    "not writable by " + who + ": " + String.join(", ", unwritable)
                            + (modes != null
                                    ? " (the file is " + modes + ")"
                                    : owner == null ? "" : " (the file is owned by " + owner + ")"),
                    "chown " + (whoName == null ? "<hook user>" : whoName) + " " + file + "* " + dir
                            + ", as root, or run fence as the file's owner");
        }
        // Root writes anything, and SQLite gives the files it creates as root to the database's owner.
        if (whoName != null && owner != null && !owner.equals(whoName) && !whoIsRoot) {
            return Finding.warn(
                    StoreChecks.SQLITE,
                    file + " is owned by " + owner + ", not " + whoName + ": writable now, but the -wal and"
                            + " -shm files that " + owner + "'s processes create may not be",
                    "chown " + whoName + " " + file + "*, so that every fence process runs as the store's owner");
        }
        return Finding.ok(StoreChecks.SQLITE, file + " and its directory are writable by " + who);
    }

    private static String owner(Path file) {
        try {
            return Files.getOwner(file).getName();
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    private static String name(UserPrincipal user) {
        return user == null ? "this user" : user.getName();
    }
}
