package dev.fence.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.opentest4j.TestAbortedException;

/**
 * A private gitolite3 behind a private {@link Sshd} on loopback, as a git host no one here wrote: gitolite
 * set up by {@code gitolite setup -pk} under this test's user with {@code HOME} in a temporary directory,
 * one key per user in its keydir, the test's {@code gitolite.conf}, and sshd reading gitolite's own
 * {@code ~/.ssh/authorized_keys} (each key's forced command runs {@code gitolite-shell <user>}). Every
 * user logs in as the same account, as on a real gitolite host, and gitolite names the pusher in {@code
 * GL_USER}. Skips the test (visibly) when gitolite is not installed.
 */
public final class Gitolite implements AutoCloseable {
    private static final Path GITOLITE = Path.of("/usr/bin/gitolite");

    private final Path home;
    private final Path keys;
    private final Sshd sshd;

    private Gitolite(Path home, Path keys, Sshd sshd) {
        this.home = home;
        this.keys = keys;
        this.sshd = sshd;
    }

    /**
     * Sets gitolite up under {@code dir} with a key for each of {@code users} and the rules {@code conf}
     * (gitolite.conf text; the gitolite-admin repo's rule is added), and starts its sshd.
     */
    public static Gitolite start(Path dir, String conf, String... users) throws IOException, InterruptedException {
        if (!Files.isExecutable(GITOLITE)) {
            throw new TestAbortedException("skipped: this test needs gitolite (Debian: apt-get install gitolite3)");
        }
        Path home = Files.createDirectories(dir.resolve("home"));
        Path keys = Files.createDirectories(dir.resolve("keys"));
        // Repositories gitolite creates start on main, as the test's clones do.
        Files.writeString(home.resolve(".gitconfig"), "[init]\n\tdefaultBranch = main\n");
        Sshd.keygen(keys.resolve("admin"));
        run(home, "setup", "-pk", keys.resolve("admin.pub").toString());
        for (String user : users) {
            Sshd.keygen(keys.resolve(user));
            Files.copy(keys.resolve(user + ".pub"), home.resolve(".gitolite/keydir/" + user + ".pub"));
        }
        // The server-side way to change gitolite's rules without pushing gitolite-admin: edit its working
        // copy, compile, and rebuild authorized_keys.
        Files.writeString(
                home.resolve(".gitolite/conf/gitolite.conf"), "repo gitolite-admin\n    RW+ = admin\n\n" + conf);
        run(home, "compile");
        run(home, "trigger", "POST_COMPILE");
        Sshd sshd =
                Sshd.start(dir.resolve("sshd"), home.resolve(".ssh/authorized_keys"), Map.of("HOME", home.toString()));
        return new Gitolite(home, keys, sshd);
    }

    /** The bare repository gitolite keeps for {@code name}. */
    public Path repo(String name) {
        return home.resolve("repositories").resolve(name + ".git");
    }

    /** The ssh URL of repository {@code name}. */
    public String url(String name) {
        return sshd.url(name);
    }

    /** The ssh command that logs in with {@code user}'s key (for {@code core.sshCommand}). */
    public String sshCommand(String user) {
        return sshd.sshCommand(keys.resolve(user));
    }

    /** What sshd logged, for assertion messages. */
    public String log() {
        return sshd.log();
    }

    @Override
    public void close() {
        sshd.close();
    }

    private static void run(Path home, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(GITOLITE.toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Map<String, String> env = new HashMap<>();
        env.put("HOME", home.toString());
        env.put("PATH", "/usr/bin:/bin");
        env.put("LANG", "C");
        env.put("USER", System.getProperty("user.name"));
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new AssertionError("gitolite " + String.join(" ", args) + " failed: " + out);
        }
    }
}
