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
 * install step under the wrong account) is the common failure: hooks then fail at their first write.
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
                return List.of(Finding.fail(
                        StoreChecks.SQLITE,
                        file + " does not exist, and " + (existing == null ? dir : existing) + " is not a directory "
                                + who + " can write: fence cannot create it",
                        "create " + dir + " owned by the user the hooks run as (e.g. install -d -o git " + dir + ")"));
            }
            return List.of(Finding.ok(
                    StoreChecks.SQLITE,
                    file + " does not exist yet: the first fence call creates it, owned by the user who makes it"));
        }
        List<String> unwritable = new ArrayList<>();
        if (!Files.isRegularFile(file)) {
            return List.of(Finding.fail(
                    StoreChecks.SQLITE, file + " is not a regular file", "point the store URL at a SQLite file"));
        }
        if (!writable.test(file)) {
            unwritable.add(file.toString());
        }
        for (String suffix : List.of("-wal", "-shm")) {
            Path companion = file.resolveSibling(file.getFileName() + suffix);
            if (Files.exists(companion) && !writable.test(companion)) {
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
            return List.of(Finding.fail(
                    StoreChecks.SQLITE,
                    "not writable by " + who + ": " + String.join(", ", unwritable)
                            + (modes != null
                                    ? " (the file is " + modes + ")"
                                    : owner == null ? "" : " (the file is owned by " + owner + ")"),
                    "chown " + (whoName == null ? "<hook user>" : whoName) + " " + file + "* " + dir
                            + ", as root, or run fence as the file's owner"));
        }
        // Root writes anything, and SQLite gives the files it creates as root to the database's owner.
        if (whoName != null && owner != null && !owner.equals(whoName) && !whoIsRoot) {
            return List.of(Finding.warn(
                    StoreChecks.SQLITE,
                    file + " is owned by " + owner + ", not " + whoName + ": writable now, but the -wal and"
                            + " -shm files that " + owner + "'s processes create may not be",
                    "chown " + whoName + " " + file + "*, so that every fence process runs as the store's owner"));
        }
        return List.of(Finding.ok(StoreChecks.SQLITE, file + " and its directory are writable by " + who));
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
