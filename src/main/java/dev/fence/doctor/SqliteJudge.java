package dev.fence.doctor;

import dev.fence.store.StoreSetup;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;

/**
 * Judges a SQLite store's file: it, its {@code -wal} and {@code -shm} companions and its directory must be
 * writable by the user fence runs as. A file that another user created (root running a hook by hand, an
 * install step under the wrong account) is the common failure: hooks then fail at their first write.
 */
final class SqliteJudge {
    private SqliteJudge() {}

    /** @param user the user fence runs as, or null when it cannot be told */
    static List<Finding> judge(StoreSetup.Sqlite s, UserPrincipal user) {
        Path file = s.file();
        Path dir = file.getParent();
        if (!Files.exists(file)) {
            Path existing = dir;
            while (existing != null && !Files.exists(existing)) {
                existing = existing.getParent();
            }
            if (existing == null || !Files.isDirectory(existing) || !Files.isWritable(existing)) {
                return List.of(Finding.fail(
                        StoreChecks.SQLITE,
                        file + " does not exist, and " + (existing == null ? dir : existing)
                                + " is not a directory this user can write: fence cannot create it",
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
        if (!Files.isWritable(file)) {
            unwritable.add(file.toString());
        }
        for (String suffix : List.of("-wal", "-shm")) {
            Path companion = file.resolveSibling(file.getFileName() + suffix);
            if (Files.exists(companion) && !Files.isWritable(companion)) {
                unwritable.add(companion.toString());
            }
        }
        // SQLite creates the -wal and -shm files (and a journal) beside the database as it goes.
        if (dir != null && !Files.isWritable(dir)) {
            unwritable.add(dir + " (the directory)");
        }
        String owner = owner(file);
        if (!unwritable.isEmpty()) {
            return List.of(Finding.fail(
                    StoreChecks.SQLITE,
                    "not writable by " + name(user) + ": " + String.join(", ", unwritable)
                            + (owner == null ? "" : " (the file is owned by " + owner + ")"),
                    "chown " + (user == null ? "<hook user>" : user.getName()) + " " + file + "* " + dir
                            + ", as root, or run fence as the file's owner"));
        }
        // Root writes anything, and SQLite gives the files it creates as root to the database's owner.
        if (user != null
                && owner != null
                && !owner.equals(user.getName())
                && !user.getName().equals("root")) {
            return List.of(Finding.warn(
                    StoreChecks.SQLITE,
                    file + " is owned by " + owner + ", not " + user.getName() + ": writable now, but the -wal and"
                            + " -shm files that " + owner + "'s processes create may not be",
                    "chown " + user.getName() + " " + file
                            + "*, so that every fence process runs as the store's owner"));
        }
        return List.of(Finding.ok(StoreChecks.SQLITE, file + " and its directory are writable by " + name(user)));
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
