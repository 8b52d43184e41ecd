package dev.fence.hook;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The little the hook needs to know of the processes above it (which one is the receiving git, when it
 * started, whether it still runs), read from Linux's {@code /proc} where there is one, else from {@link
 * ProcessHandle}.
 *
 * <p>Why not always {@link ProcessHandle}: its implementation's class initialiser links a lambda, and on
 * JDK 17 a process's first lambda starts {@code java.lang.invoke} and spins classes at run time, about
 * 5 ms of every push (a third of the hook's budget over the JVM's own start; {@code LauncherArchiveIT}
 * checks that the hook's path links none). {@code /proc/<pid>/stat} is read as the kernel documents it
 * (proc(5)): the command name in parentheses may hold any character, so fields are counted after the
 * last {@code ')'}.
 *
 * <p>A start mark is only ever compared with another from the same host: clock ticks since boot from
 * {@code /proc}, epoch milliseconds from {@link ProcessHandle}.
 */
final class ProcessTable {
    private static final Path PROC = Path.of("/proc");

    /** Asked once per process: a hook walks several processes, each needing two or three answers. */
    private static final boolean HAS_PROC = Files.isDirectory(PROC.resolve("self"));

    private ProcessTable() {}

    private static boolean hasProc() {
        return HAS_PROC;
    }

    /** This process's pid. */
    static long self() {
        if (hasProc()) {
            try {
                return Long.parseLong(
                        Files.readSymbolicLink(PROC.resolve("self")).toString());
            } catch (IOException | NumberFormatException e) {
                // fall through to ProcessHandle
            }
        }
        return ProcessHandle.current().pid();
    }

    /** The parent of {@code pid}, or -1 when it has none or is gone. */
    static long parent(long pid) {
        if (hasProc()) {
            String[] f = stat(pid);
            return f == null ? -1 : Long.parseLong(f[1]);
        }
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        if (p.isEmpty()) {
            return -1;
        }
        Optional<ProcessHandle> parent = p.get().parent();
        return parent.isPresent() ? parent.get().pid() : -1;
    }

    /** When {@code pid} started (a mark to compare, see above), or -1 when it does not run. */
    static long started(long pid) {
        if (hasProc()) {
            String[] f = stat(pid);
            // A zombie has exited: its updates are as final as they will be.
            return f == null || f[0].equals("Z") ? -1 : Long.parseLong(f[19]);
        }
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        if (p.isEmpty() || !p.get().isAlive()) {
            return -1;
        }
        Optional<java.time.Instant> start = p.get().info().startInstant();
        return start.isPresent() ? start.get().toEpochMilli() : 0;
    }

    /** The file name of {@code pid}'s executable, or "" when it cannot be read. */
    static String command(long pid) {
        String command = "";
        if (hasProc()) {
            try {
                command = Files.readSymbolicLink(
                                PROC.resolve(Long.toString(pid)).resolve("exe"))
                        .toString();
            } catch (IOException | UnsupportedOperationException | SecurityException e) {
                return "";
            }
        } else {
            Optional<ProcessHandle> p = ProcessHandle.of(pid);
            if (p.isPresent()) {
                command = p.get().info().command().orElse("");
            }
        }
        return command.substring(command.lastIndexOf('/') + 1);
    }

    /** The fields of {@code /proc/<pid>/stat} after the command name (state first), or null when gone. */
    private static String[] stat(long pid) {
        String text;
        try {
            text = Files.readString(PROC.resolve(Long.toString(pid)).resolve("stat"), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            return null;
        }
        int end = text.lastIndexOf(')');
        if (end < 0) {
            return null;
        }
        String[] f = text.substring(end + 1).trim().split(" ");
        return f.length > 19 ? f : null;
    }
}
