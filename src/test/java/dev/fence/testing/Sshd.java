package dev.fence.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.opentest4j.TestAbortedException;

/**
 * A private OpenSSH server on a free loopback port, for tests that push over ssh: host and user keys
 * made in a temporary directory, its own config (no system config is read), and the test's own user
 * logging in with the user key only, its commands run through {@code git-shell} as a git host would.
 * Or ({@link #start(Path, Path, Map)}) a git host's own authorized_keys, whose forced commands decide
 * who logs in as whom (gitolite). Skips the test (visibly) when {@code sshd}, {@code ssh-keygen} or
 * {@code git-shell} is missing.
 */
public final class Sshd implements AutoCloseable {
    private static final Path SSHD = Path.of("/usr/sbin/sshd");

    private final Path dir;
    private final int port;
    private final Process process;

    private Sshd(Path dir, int port, Process process) {
        this.dir = dir;
        this.port = port;
        this.process = process;
    }

    /** Starts sshd with its files under {@code dir}. */
    public static Sshd start(Path dir) throws IOException, InterruptedException {
        return start(dir, null, Map.of());
    }

    /**
     * Starts sshd with its files under {@code dir}, reading the keys allowed to log in from {@code
     * authorizedKeys} (null: its own, the test user's key running {@code git-shell}), and setting {@code
     * sessionEnv} in every session (sshd's {@code SetEnv}; it overrides what sshd sets itself, {@code HOME}
     * included).
     */
    public static Sshd start(Path dir, Path authorizedKeys, Map<String, String> sessionEnv)
            throws IOException, InterruptedException {
        String shell = which("git-shell");
        if (!Files.isExecutable(SSHD) || which("ssh-keygen") == null || which("ssh") == null || shell == null) {
            throw new TestAbortedException("skipped: this test needs /usr/sbin/sshd, ssh, ssh-keygen and git-shell"
                    + " (Debian: apt-get install openssh-server openssh-client git)");
        }
        Files.createDirectories(dir);
        // sshd refuses to start without its privilege-separation directory, which the package's service
        // unit creates at boot; a machine that never ran the service lacks it.
        Path privsep = Path.of("/run/sshd");
        if (!Files.isDirectory(privsep)) {
            try {
                Files.createDirectories(privsep);
            } catch (IOException e) {
                throw new TestAbortedException("skipped: sshd needs " + privsep + ", which cannot be created here");
            }
        }
        keygen(dir.resolve("host_key"));
        keygen(dir.resolve("user_key"));
        String user = System.getProperty("user.name");
        String userKey = Files.readString(dir.resolve("user_key.pub")).strip();
        Files.writeString(
                dir.resolve("authorized_keys"),
                "command=\"" + shell + " -c \\\"$SSH_ORIGINAL_COMMAND\\\"\",no-port-forwarding,no-pty,"
                        + "no-agent-forwarding,no-X11-forwarding " + userKey + "\n");
        Path keys = authorizedKeys != null ? authorizedKeys : dir.resolve("authorized_keys");
        StringBuilder setEnv = new StringBuilder();
        sessionEnv.forEach((k, v) ->
                setEnv.append("SetEnv ").append(k).append('=').append(v).append('\n'));
        int port = freePort();
        Files.writeString(
                dir.resolve("sshd_config"),
                String.join(
                        "\n",
                        "Port " + port,
                        "ListenAddress 127.0.0.1",
                        "HostKey " + dir.resolve("host_key"),
                        "PidFile " + dir.resolve("sshd.pid"),
                        "AuthorizedKeysFile " + keys,
                        "StrictModes no",
                        "UsePAM no",
                        "PasswordAuthentication no",
                        "KbdInteractiveAuthentication no",
                        "PubkeyAuthentication yes",
                        "PermitRootLogin prohibit-password",
                        "AllowUsers " + user,
                        "LogLevel INFO",
                        setEnv.toString()));
        String hostKey = Files.readString(dir.resolve("host_key.pub")).strip();
        Files.writeString(dir.resolve("known_hosts"), "[127.0.0.1]:" + port + " " + hostKey + "\n");
        Path log = dir.resolve("sshd.log");
        Process p = new ProcessBuilder(
                        SSHD.toString(),
                        "-D",
                        "-e",
                        "-f",
                        dir.resolve("sshd_config").toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        Sshd sshd = new Sshd(dir, port, p);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new AssertionError("sshd exited " + p.exitValue() + ": " + Files.readString(log));
            }
            if (Files.readString(log).contains("Server listening")) {
                return sshd;
            }
            Thread.sleep(50);
        }
        sshd.close();
        throw new AssertionError("sshd did not start listening in 15 s: " + Files.readString(log));
    }

    /** An ssh URL of {@code repo} (an absolute path on this machine) on this server. */
    public String url(Path repo) {
        return "ssh://" + System.getProperty("user.name") + "@127.0.0.1:" + port + repo.toAbsolutePath();
    }

    /** An ssh URL of {@code path} as the login's forced command sees it (gitolite: the repo name). */
    public String url(String path) {
        return "ssh://" + System.getProperty("user.name") + "@127.0.0.1:" + port + "/" + path;
    }

    /** The ssh command (for {@code GIT_SSH_COMMAND} or {@code core.sshCommand}) that logs in with the user key. */
    public String sshCommand() {
        return sshCommand(dir.resolve("user_key"));
    }

    /** The ssh command that logs in with the private key {@code key}. */
    public String sshCommand(Path key) {
        return "ssh -F /dev/null -i " + key + " -o IdentitiesOnly=yes -o BatchMode=yes"
                + " -o StrictHostKeyChecking=yes -o UserKnownHostsFile=" + dir.resolve("known_hosts");
    }

    /** What sshd logged so far, for assertion messages. */
    public String log() {
        try {
            return Files.readString(dir.resolve("sshd.log"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    /** Makes an ed25519 key pair without a passphrase: {@code key} and {@code key.pub}. */
    public static void keygen(Path key) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(
                        "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fence-test", "-f", key.toString())
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new AssertionError("ssh-keygen failed: " + out);
        }
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    }

    private static String which(String name) {
        for (String d : List.of("/usr/bin", "/bin", "/usr/sbin", "/usr/local/bin")) {
            Path p = Path.of(d, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
