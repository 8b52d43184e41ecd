package dev.fence.doctor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A local account as the kernel judges file access for it: its uid and every group it is in. Lets {@code
 * fence doctor} judge files for the user the hooks run as (say {@code git}) while it runs as another (say
 * root, who may write anything): the question that matters is whether a push can write the store.
 *
 * <p>Access is judged from the POSIX mode bits alone: owner, else group, else others; uid 0 may do
 * anything. ACLs and immutable flags are not read.
 *
 * @param name the login name
 * @param uid its user id
 * @param gids its primary group and every group {@code /etc/group} lists it in
 */
public record Account(String name, int uid, Set<Integer> gids) {
    public Account {
        gids = Set.copyOf(gids);
    }

    /** The account named {@code name} in {@code /etc/passwd} and {@code /etc/group}; empty when absent. */
    public static Optional<Account> lookup(String name) {
        return lookup(name, Path.of("/etc/passwd"), Path.of("/etc/group"));
    }

    /** As {@link #lookup(String)}, from these files (colon-separated, as {@code passwd(5)} and {@code group(5)}). */
    static Optional<Account> lookup(String name, Path passwd, Path group) {
        try {
            for (String line : Files.readAllLines(passwd)) {
                String[] f = line.split(":", -1);
                if (f.length >= 4 && f[0].equals(name)) {
                    Set<Integer> gids = new HashSet<>();
                    gids.add(Integer.parseInt(f[3]));
                    if (Files.isReadable(group)) {
                        for (String g : Files.readAllLines(group)) {
                            String[] gf = g.split(":", -1);
                            if (gf.length >= 4 && List.of(gf[3].split(",")).contains(name)) {
                                gids.add(Integer.parseInt(gf[2]));
                            }
                        }
                    }
                    return Optional.of(new Account(name, Integer.parseInt(f[2]), gids));
                }
            }
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /** True for root, whom file modes do not stop. */
    public boolean isRoot() {
        return uid == 0;
    }

    /** True when this account may write {@code path} (and, for a directory, create files in it). */
    public boolean canWrite(Path path) {
        return Files.isDirectory(path) ? allows(path, 0200 | 0100) : allows(path, 0200);
    }

    /** True when this account may read {@code path}. */
    public boolean canRead(Path path) {
        return allows(path, 0400);
    }

    /** The file's owner and mode as {@code ls -l} shows them, e.g. {@code root, rw-r--r--}; null if unreadable. */
    static String describe(Path path) {
        try {
            int mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            String owner = Files.getOwner(path).getName();
            StringBuilder bits = new StringBuilder();
            for (int shift = 6; shift >= 0; shift -= 3) {
                int b = mode >> shift;
                bits.append((b & 4) != 0 ? 'r' : '-')
                        .append((b & 2) != 0 ? 'w' : '-')
                        .append((b & 1) != 0 ? 'x' : '-');
            }
            return "owned by " + owner + ", mode " + bits;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return null;
        }
    }

    /** {@code ownerBits} (in the owner's position) allowed for this account by the file's mode. */
    private boolean allows(Path path, int ownerBits) {
        if (isRoot()) {
            return Files.exists(path);
        }
        try {
            int mode = (Integer) Files.getAttribute(path, "unix:mode");
            int owner = (Integer) Files.getAttribute(path, "unix:uid");
            int group = (Integer) Files.getAttribute(path, "unix:gid");
            int shift = owner == uid ? 0 : gids.contains(group) ? 3 : 6;
            int wanted = ownerBits >> shift;
            return (mode & wanted) == wanted;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }
}
