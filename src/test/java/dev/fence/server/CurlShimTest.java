package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.ProcessTest;
import dev.fence.testing.Stdin;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The curl shim on its own: server down, wrong credentials, budget and the GitLab prefix. */
@ProcessTest
class CurlShimTest {
    private static final String LINE = "0".repeat(40) + " " + "6".repeat(40) + " refs/heads/main\n";

    @TempDir
    static Path tmp;

    static TestServer t;
    static String hook;

    @BeforeAll
    static void start() {
        t = TestServer.start(tmp.resolve("server"), "sqlite:" + tmp.resolve("shim.db"), "");
        hook = t.add("githost", Role.HOOK);
    }

    @AfterAll
    static void stop() {
        t.close();
    }

    record Run(int exit, String err, long millis) {}

    static Run shim(Map<String, String> extra) throws Exception {
        Map<String, String> env = new HashMap<>(Map.of(
                "PATH", "/usr/bin:/bin", "REMOTE_USER", "alice", "FENCE_REPO_ID", "app", "HOME", tmp.toString()));
        env.putAll(extra);
        ProcessBuilder pb = new ProcessBuilder(
                        "bash",
                        Path.of("hooks/pre-receive-curl.sh").toAbsolutePath().toString())
                .directory(tmp.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        long start = System.nanoTime();
        Process p = pb.start();
        Stdin.feed(p, LINE);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(20, TimeUnit.SECONDS));
        return new Run(p.exitValue(), err, (System.nanoTime() - start) / 1_000_000);
    }

    static String closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return "http://127.0.0.1:" + s.getLocalPort();
        }
    }

    @Test
    void aReachableServerDecides() throws Exception {
        Run r = shim(Map.of("FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", hook));
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.err());
    }

    @Test
    void aServerOnThisHostIsAskedThroughBashAloneAndOthersThroughCurl() throws Exception {
        // A PATH with git and no curl: the shim's usual path on this host must not need curl.
        Path bin = tmp.resolve("no-curl");
        Files.createDirectories(bin);
        Files.createSymbolicLink(bin.resolve("git"), Path.of("/usr/bin/git"));
        Run tcp = shim(Map.of("PATH", bin.toString(), "FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", hook));
        assertEquals(0, tcp.exit(), tcp.err());
        assertEquals("", tcp.err());

        Run curl = shim(Map.of(
                "PATH",
                bin.toString(),
                "FENCE_SERVER",
                t.url(),
                "FENCE_CREDENTIAL",
                hook,
                "FENCE_SHIM_TRANSPORT",
                "curl"));
        assertEquals(1, curl.exit(), curl.err());
        assertTrue(curl.err().contains("the fence server is unavailable (curl exit 127"), curl.err());

        Run viaCurl = shim(Map.of("FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", hook, "FENCE_SHIM_TRANSPORT", "curl"));
        assertEquals(0, viaCurl.exit(), viaCurl.err());

        Run bad = shim(Map.of("FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", hook, "FENCE_SHIM_TRANSPORT", "nc"));
        assertEquals(1, bad.exit());
        assertTrue(bad.err().contains("reason=bad-config"), bad.err());
    }

    @Test
    void aMalformedCredentialOrBudgetIsABadConfigurationNeverAnAcceptance() throws Exception {
        for (String credential : new String[] {"no-colon", ":secret", "name:", "na me:secret", "name:sec:ret"}) {
            Run r = shim(
                    Map.of("FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", credential, "FENCE_ON_SERVER_DOWN", "accept"));
            assertEquals(1, r.exit(), credential);
            assertTrue(r.err().contains("reason=bad-config"), r.err());
            assertTrue(r.err().contains("FENCE_CREDENTIAL is not <name>:<secret>"), r.err());
        }
        for (String budget : new String[] {"abc", "1000", "1.2345", ".5", "-1"}) {
            Run r = shim(Map.of("FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", hook, "FENCE_SHIM_BUDGET", budget));
            assertEquals(1, r.exit(), budget);
            assertTrue(r.err().contains("FENCE_SHIM_BUDGET must be seconds"), r.err());
        }
        Run fine = shim(Map.of("FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", hook, "FENCE_SHIM_BUDGET", "2.5"));
        assertEquals(0, fine.exit(), fine.err());
    }

    @Test
    void anUnreachableServerRejectsUnlessConfiguredToAcceptButNeverForTokens() throws Exception {
        String down = closedPort();
        Run reject = shim(Map.of("FENCE_SERVER", down, "FENCE_CREDENTIAL", hook));
        assertEquals(1, reject.exit());
        assertTrue(
                reject.err()
                        .startsWith("REJECTED resource=- ref=- token=- current=0 reason=store-down\n"
                                + "fence: the fence server is unavailable (curl exit 7"),
                reject.err());

        Run accept = shim(Map.of("FENCE_SERVER", down, "FENCE_CREDENTIAL", hook, "FENCE_ON_SERVER_DOWN", "accept"));
        assertEquals(0, accept.exit(), accept.err());
        assertTrue(accept.err().contains("accepted without a fence check (FENCE_ON_SERVER_DOWN=accept)"), accept.err());

        Run token = shim(Map.of(
                "FENCE_SERVER",
                down,
                "FENCE_CREDENTIAL",
                hook,
                "FENCE_ON_SERVER_DOWN",
                "accept",
                "GIT_PUSH_OPTION_COUNT",
                "1",
                "GIT_PUSH_OPTION_0",
                "fence=12"));
        assertEquals(1, token.exit(), token.err());
        assertTrue(token.err().contains("pushes carrying a fence token are refused"), token.err());
    }

    @Test
    void aRepoIdFromTheShimsConfigurationFileNamesTheResource() throws Exception {
        Path dir = tmp.resolve("conf-shim");
        Files.createDirectories(dir);
        Path script = dir.resolve("pre-receive");
        Files.copy(Path.of("hooks/pre-receive-curl.sh"), script);
        Files.writeString(
                dir.resolve("fence-shim.conf"),
                "FENCE_SERVER=" + t.url() + "\nFENCE_CREDENTIAL=" + hook + "\nFENCE_REPO_ID=from-conf\n");
        ProcessBuilder pb = new ProcessBuilder("bash", script.toString()).directory(tmp.toFile());
        pb.environment().clear();
        pb.environment().putAll(Map.of("PATH", "/usr/bin:/bin", "REMOTE_USER", "alice", "HOME", tmp.toString()));
        Process p = pb.start();
        Stdin.feed(p, LINE);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(20, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), err);
        String auditor = t.add("conf-reader", Role.AUDITOR);
        TestServer.Response events = t.get("/v1/audit?repo=from-conf", auditor, null);
        assertEquals(200, events.status(), events.body());
        assertTrue(events.body().contains("\"resource\":\"git:from-conf:refs/heads/main\""), events.body());
    }

    /** A repository config, the repository's directory, whether git is on the shim's PATH, the repo id. */
    record RepoIdCase(String config, String dir, boolean git, String repoId) {}

    @Test
    void aRepoIdInTheRepositorysConfigNamesTheResourceAsGitWouldReadIt() throws Exception {
        // As fence install writes it, the shim reads it without git; any other spelling is git's to read; a
        // subsection is another key, and the directory then names the repository.
        Path noGit = Files.createDirectories(tmp.resolve("no-git"));
        String auditor = t.add("repo-id-reader", Role.AUDITOR);
        List<RepoIdCase> cases = List.of(
                new RepoIdCase("[core]\n\tbare = true\n[Fence]\n\trepoId = plain-id\n", "a.git", false, "plain-id"),
                new RepoIdCase(
                        "[fence]\n\trepoId = first\n[core]\n\tbare = true\n[fence]\n  REPOID=last.one/x\r\n",
                        "b.git",
                        false,
                        "last.one/x"),
                new RepoIdCase("[fence]\n\trepoId = \"quoted-id\" ; set by hand\n", "c.git", true, "quoted-id"),
                new RepoIdCase("[fence \"other\"]\n\trepoId = not-this\n", "by-dir-name.git", true, "by-dir-name"));
        for (RepoIdCase c : cases) {
            Path repo = Files.createDirectories(tmp.resolve(c.dir()));
            Files.writeString(repo.resolve("config"), c.config());
            ProcessBuilder pb = new ProcessBuilder(
                            "bash",
                            Path.of("hooks/pre-receive-curl.sh")
                                    .toAbsolutePath()
                                    .toString())
                    .directory(repo.toFile());
            pb.environment().clear();
            pb.environment()
                    .putAll(Map.of(
                            "PATH",
                            c.git() ? "/usr/bin:/bin" : noGit.toString(),
                            "GIT_DIR",
                            ".",
                            "REMOTE_USER",
                            "alice",
                            "HOME",
                            tmp.toString(),
                            "FENCE_SERVER",
                            t.url(),
                            "FENCE_CREDENTIAL",
                            hook));
            Process p = pb.start();
            Stdin.feed(p, LINE);
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(20, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), c + ": " + err);
            TestServer.Response events = t.get("/v1/audit?repo=" + c.repoId(), auditor, null);
            assertEquals(200, events.status(), events.body());
            assertTrue(
                    events.body().contains("\"resource\":\"git:" + c.repoId() + ":refs/heads/main\""),
                    c + " -> " + events.body());
        }
    }

    @Test
    void aServerThatNeverAnswersCostsTheBudgetAndNoMore() throws Exception {
        try (ServerSocket silent = new ServerSocket(0)) {
            Run r = shim(Map.of(
                    "FENCE_SERVER",
                    "http://127.0.0.1:" + silent.getLocalPort(),
                    "FENCE_CREDENTIAL",
                    hook,
                    "FENCE_SHIM_BUDGET",
                    "1.5"));
            assertEquals(1, r.exit(), r.err());
            assertTrue(r.millis() < 3000, "took " + r.millis() + " ms");
            assertTrue(r.err().contains("fence server is unavailable"), r.err());
        }
    }

    @Test
    void aWrongCredentialOrMissingSettingRejectsEvenWhenDownWouldAccept() throws Exception {
        Run wrong = shim(Map.of(
                "FENCE_SERVER",
                t.url(),
                "FENCE_CREDENTIAL",
                "githost:" + "z".repeat(43),
                "FENCE_ON_SERVER_DOWN",
                "accept"));
        assertEquals(1, wrong.exit());
        assertTrue(wrong.err().contains("reason=bad-config"), wrong.err());
        assertTrue(wrong.err().contains("refused this hook's credential (HTTP 401"), wrong.err());
        assertTrue(!wrong.err().contains("z".repeat(43)), "never echo the credential");

        Run missing = shim(Map.of("FENCE_SERVER", t.url()));
        assertEquals(1, missing.exit());
        assertTrue(missing.err().contains("FENCE_CREDENTIAL is not set"), missing.err());

        Run gitlab = shim(Map.of(
                "FENCE_SERVER",
                closedPort(),
                "FENCE_CREDENTIAL",
                hook,
                "GL_ID",
                "user-1",
                "GL_USERNAME",
                "alice",
                "GL_REPOSITORY",
                "project-1"));
        assertEquals(1, gitlab.exit());
        for (String line : gitlab.err().split("\n")) {
            assertTrue(line.startsWith("GL-HOOK-ERR: "), line);
        }
    }
}
