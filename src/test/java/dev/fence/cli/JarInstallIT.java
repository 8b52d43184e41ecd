package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fence.testing.GitProcess;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.Processes;
import dev.fence.testing.Processes.Run;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence install --bare} run from the built jar, then pushed to with the real git: the hook runs the
 * java and jar that ran the installer whatever the git server's PATH holds and whatever the pusher's
 * environment says; without a store every push to a fenced ref is refused, as install says; {@code
 * --server} installs the curl shim, its configuration and its credential, and a real {@code fence serve}
 * judges the pushes; a repository owner who does not own the installation still gets the class-data
 * archive, in its own cache.
 */
@ProcessTest
class JarInstallIT {
    @TempDir
    Path tmp;

    private static final String JAVA =
            Path.of(System.getProperty("java.home"), "bin", "java").toString();

    /** The built jar, alone in a directory (no launcher anywhere near it). */
    private Path jarAlone() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("dist"));
        return Files.copy(Path.of(System.getProperty("fence.jar")), dir.resolve("fence.jar"));
    }

    /** A directory whose only command is git: no java, no fence on the git server's PATH. */
    private Path onlyGit() throws IOException {
        Path bin = Files.createDirectories(tmp.resolve("only-git"));
        Path git = bin.resolve("git");
        if (!Files.exists(git)) {
            Files.createSymbolicLink(git, Path.of(GitProcess.GIT));
        }
        return bin;
    }

    private Map<String, String> gitEnv() throws IOException {
        Map<String, String> env = new HashMap<>(GitProcess.cleanEnv(tmp.resolve("home")));
        env.put("PATH", onlyGit().toString());
        env.put("USER", "agent-a");
        return env;
    }

    private static Run run(List<String> command, Map<String, String> env, Path dir) throws Exception {
        return Processes.run(command, env, dir);
    }

    /** {@code java -jar <jar> args…}, with a plain environment. */
    private Run fence(Path jar, Map<String, String> extraEnv, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(JAVA, "-jar", jar.toString()));
        command.addAll(List.of(args));
        Map<String, String> env = new HashMap<>(GitProcess.cleanEnv(tmp.resolve("home")));
        env.putAll(extraEnv);
        return run(command, env, tmp);
    }

    private Path bareRepo() {
        Path repo = tmp.resolve("app.git");
        GitProcess.run(tmp, GitProcess.cleanEnv(tmp), "init", "-q", "--bare", "-b", "main", repo.toString());
        return repo;
    }

    private Path workTree() {
        Path work = tmp.resolve("work");
        GitProcess.run(tmp, GitProcess.cleanEnv(tmp), "init", "-q", "-b", "main", work.toString());
        return work;
    }

    private static GitProcess.Result push(
            Path work, Map<String, String> env, Path repo, JsonNode lease, String message) {
        GitProcess.run(work, env, "commit", "-q", "--allow-empty", "-m", message);
        List<String> args = new ArrayList<>(List.of("push", "-q"));
        if (lease != null) {
            args.addAll(List.of(
                    "-o",
                    "fence=" + lease.get("token").asText(),
                    "-o",
                    "fence-proof=" + lease.get("proof").asText()));
        }
        args.addAll(List.of(repo.toString(), "HEAD:main"));
        return GitProcess.runAllowingFailure(work, env, args.toArray(String[]::new));
    }

    private JsonNode acquire(Path jar, Map<String, String> env, String holder, String... where) throws Exception {
        List<String> args = new ArrayList<>(
                List.of("lease", "acquire", "--repo", "app", "--ref", "main", "--holder", holder, "--json"));
        args.addAll(List.of(where));
        Run r = fence(jar, env, args.toArray(String[]::new));
        assertEquals(0, r.exit(), r.err());
        return new ObjectMapper().readTree(r.out());
    }

    @Test
    void aHookInstalledByJavaDashJarRunsThatJavaAndJarWhateverThePusherSets() throws Exception {
        Path jar = jarAlone();
        Path repo = bareRepo();
        String store = "sqlite:" + tmp.resolve("fence.db");
        Run installed = fence(jar, Map.of(), "install", "--bare", repo.toString(), "--store", store);
        assertEquals(0, installed.exit(), installed.err());
        assertFalse(installed.out().contains("warning:"), installed.out());
        String hook = Files.readString(repo.resolve("hooks/pre-receive"));
        assertTrue(hook.contains("exec " + JAVA + " "), hook);
        assertTrue(hook.contains(" -jar " + jar + " hook pre-receive"), hook);

        Path work = workTree();
        Map<String, String> pusher = new HashMap<>(gitEnv());
        // A pusher trying to swap the program that judges it: each of these, if honoured, would run
        // another program or stop the JVM from starting at all.
        pusher.put("FENCE_JAVA", "/bin/false");
        pusher.put("FENCE_JAR", tmp.resolve("nowhere.jar").toString());
        pusher.put("FENCE_JAVA_OPTS", "-javaagent:" + tmp.resolve("nowhere.jar"));
        pusher.put("JAVA_TOOL_OPTIONS", "-javaagent:" + tmp.resolve("nowhere.jar"));
        pusher.put("JDK_JAVA_OPTIONS", "-javaagent:" + tmp.resolve("nowhere.jar"));
        JsonNode lease = acquire(jar, Map.of(), "agent-a", "--store", store);
        GitProcess.Result admitted = push(work, pusher, repo, lease, "one");
        assertEquals(0, admitted.exit(), admitted.stderr());
        assertEquals("", admitted.stderr());

        Run released = fence(
                jar,
                Map.of("FENCE_PROOF", lease.get("proof").asText()),
                "lease",
                "release",
                "--resource",
                "git:app:refs/heads/main",
                "--holder",
                "agent-a",
                "--token",
                lease.get("token").asText(),
                "--store",
                store);
        assertEquals(0, released.exit(), released.err());
        JsonNode successor = acquire(jar, Map.of(), "agent-b", "--store", store);
        assertNotEquals(lease.get("token").asLong(), successor.get("token").asLong());
        GitProcess.Result fenced = push(work, pusher, repo, lease, "two");
        assertNotEquals(0, fenced.exit(), "a superseded token was admitted");
        assertTrue(fenced.stderr().contains("FENCED"), fenced.stderr());
    }

    @Test
    void withoutAStoreEveryPushToAFencedRefIsRefusedAsInstallSays() throws Exception {
        Path jar = jarAlone();
        Path repo = bareRepo();
        Path home = tmp.resolve("home");
        Run installed = fence(jar, Map.of(), "install", "--bare", repo.toString());
        assertEquals(0, installed.exit(), installed.err());
        assertTrue(
                installed.out().contains("Until then every push to a fenced ref is refused (reason=bad-config)"),
                installed.out());
        assertFalse(installed.out().contains("FENCE_STORE"), "the hook never reads it: " + installed.out());

        Path work = workTree();
        Map<String, String> pusher = new HashMap<>(gitEnv());
        pusher.put("FENCE_STORE", "sqlite:" + tmp.resolve("pushers-own.db"));
        GitProcess.Result refused = push(work, pusher, repo, null, "one");
        assertNotEquals(0, refused.exit(), "a push without any store was admitted");
        assertTrue(refused.stderr().contains("reason=bad-config"), refused.stderr());
        assertTrue(refused.stderr().contains("no store configured"), refused.stderr());
        assertFalse(Files.exists(tmp.resolve("pushers-own.db")), "the pusher's FENCE_STORE was used");
        assertFalse(Files.exists(home.resolve(".local/share/fence")), "a default store appeared in HOME");
    }

    @Test
    void aServerInstallPutsTheCurlShimAndItsCredentialInPlaceForARealFenceServe() throws Exception {
        Path jar = jarAlone();
        Path credentials = tmp.resolve("credentials");
        String hookCredential = credential(jar, credentials, "git", "hook");
        Path credentialFile = Files.writeString(tmp.resolve("hook.credential"), hookCredential + "\n");
        String agentCredential = credential(jar, credentials, "agents", "agent", "--holder", "agent-*");

        List<String> serve = List.of(
                JAVA,
                "-jar",
                jar.toString(),
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--store",
                "sqlite:" + tmp.resolve("server.db"),
                "--credentials",
                credentials.toString());
        Path serveOut = tmp.resolve("serve.out");
        Process server = new ProcessBuilder(serve)
                .redirectOutput(serveOut.toFile())
                .redirectError(tmp.resolve("serve.err").toFile())
                .start();
        try {
            String url = Processes.listeningOn(server, serveOut, tmp.resolve("serve.err"));
            Path repo = bareRepo();
            Run installed = fence(
                    jar,
                    Map.of(),
                    "install",
                    "--bare",
                    repo.toString(),
                    "--server",
                    url,
                    "--credential-file",
                    credentialFile.toString());
            assertEquals(0, installed.exit(), installed.err());
            assertFalse(installed.out().contains("warning:"), installed.out());
            assertFalse(installed.out().contains("FENCE_CREDENTIAL=…"), "no credential step left: " + installed.out());
            Path conf = repo.resolve("hooks/fence-shim.conf");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(conf)));
            String confText = Files.readString(conf);
            assertTrue(confText.contains("\nFENCE_SERVER=" + url + "\n"), confText);
            assertTrue(confText.contains("\nFENCE_CREDENTIAL=" + hookCredential + "\n"), "credential");
            assertFalse(installed.out().contains(hookCredential), "install echoed the secret");
            assertEquals(
                    new String(Files.readAllBytes(Path.of("hooks/pre-receive-curl.sh")), StandardCharsets.UTF_8),
                    Files.readString(repo.resolve("hooks/pre-receive")),
                    "the shim the jar carries");

            Path work = workTree();
            Map<String, String> pusher = new HashMap<>(GitProcess.cleanEnv(tmp.resolve("home")));
            pusher.put("FENCE_SERVER", "http://127.0.0.1:1");
            pusher.put("USER", "agent-a");
            Map<String, String> agent = Map.of("FENCE_CREDENTIAL", agentCredential);
            JsonNode lease = acquire(jar, agent, "agent-a", "--server", url);
            GitProcess.Result admitted = push(work, pusher, repo, lease, "one");
            assertEquals(0, admitted.exit(), admitted.stderr());
            GitProcess.Result guessed = push(
                    work,
                    pusher,
                    repo,
                    new ObjectMapper()
                            .readTree("{\"token\":" + (lease.get("token").asLong() + 1) + ",\"proof\":\""
                                    + lease.get("proof").asText() + "\"}"),
                    "two");
            assertNotEquals(0, guessed.exit(), "a token never granted was admitted");
            assertTrue(guessed.stderr().contains("FENCED"), "fence serve's verdict: " + guessed.stderr());
        } finally {
            server.destroy();
            server.waitFor(20, TimeUnit.SECONDS);
        }
    }

    /** {@code fence serve credentials add} into {@code file}: the {@code <name>:<secret>} it prints once. */
    private String credential(Path jar, Path file, String name, String role, String... more) throws Exception {
        List<String> args = new ArrayList<>(
                List.of("serve", "credentials", "add", "--name", name, "--role", role, "--file", file.toString()));
        args.addAll(List.of(more));
        Run r = fence(jar, Map.of(), args.toArray(String[]::new));
        assertEquals(0, r.exit(), r.err());
        return r.out().strip();
    }

    /**
     * The repository's owner runs the install through the launcher of an installation it cannot write (a
     * root-owned {@code /opt/fence}): the archive goes to that user's cache and the hook names it, instead
     * of a warning that the archive could not be built.
     */
    @Test
    void theRepositoryOwnerGetsTheArchiveInItsOwnCache() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root to act as another user");
        assumeTrue(Files.isExecutable(Path.of("/usr/sbin/runuser")), "no runuser");
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path opt = Files.createDirectories(tmp.resolve("opt/fence"));
        Path bin = Files.createDirectories(opt.resolve("bin"));
        Path lib = Files.createDirectories(opt.resolve("lib"));
        Files.copy(Path.of("bin/fence"), bin.resolve("fence"));
        Files.setPosixFilePermissions(bin.resolve("fence"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.copy(Path.of(System.getProperty("fence.jar")), lib.resolve("fence.jar"));
        Files.setPosixFilePermissions(lib.resolve("fence.jar"), PosixFilePermissions.fromString("rw-r--r--"));

        Path owner = Files.createDirectories(tmp.resolve("srv"));
        Path repo = owner.resolve("app.git");
        GitProcess.run(tmp, GitProcess.cleanEnv(tmp), "init", "-q", "--bare", "-b", "main", repo.toString());
        Path ownerHome = Files.createDirectories(owner.resolve("home"));
        chownNobody(owner);

        Run installed = run(
                List.of(
                        "/usr/sbin/runuser",
                        "-u",
                        "nobody",
                        "--",
                        "/usr/bin/env",
                        "HOME=" + ownerHome,
                        "PATH=/usr/bin:/bin",
                        "FENCE_JAVA=" + JAVA,
                        bin.resolve("fence").toString(),
                        "install",
                        "--bare",
                        repo.toString(),
                        "--store",
                        "sqlite:" + owner.resolve("fence.db")),
                Map.of("PATH", "/usr/bin:/bin", "HOME", ownerHome.toString(), "FENCE_JAVA", JAVA),
                owner);
        assertEquals(0, installed.exit(), installed.err());
        assertFalse(installed.out().contains("warning"), installed.out());
        assertTrue(installed.out().contains("built the class-data archive"), installed.out());
        String hook = Files.readString(repo.resolve("hooks/pre-receive"));
        String archiveLine =
                hook.lines().filter(l -> l.startsWith("archive=")).findFirst().orElseThrow();
        Path archive = Path.of(archiveLine.substring("archive=".length()));
        assertTrue(archive.startsWith(ownerHome.resolve(".cache/fence")), archiveLine);
        assertTrue(Files.isRegularFile(archive), "install built " + archive);
        try (Stream<Path> files = Files.list(lib)) {
            assertEquals(1, files.count(), "nothing was written beside the jar");
        }
    }

    private static void chownNobody(Path dir) throws IOException {
        var nobody = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.toList()) {
                Files.setOwner(p, nobody);
            }
        }
    }
}
