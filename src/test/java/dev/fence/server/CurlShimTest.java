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
        return shim(extra, LINE);
    }

    static Run shim(Map<String, String> extra, String input) throws Exception {
        return shim(tmp.resolve("shim"), extra, input);
    }

    /** As {@link #shim(Map, String)}, with the shim installed in {@code dir}. */
    static Run shim(Path dir, Map<String, String> extra, String input) throws Exception {
        Map<String, String> env =
                new HashMap<>(Map.of("PATH", "/usr/bin:/bin", "REMOTE_USER", "alice", "HOME", tmp.toString()));
        env.putAll(extra);
        ProcessBuilder pb = new ProcessBuilder(
                        "bash",
                        ShimFiles.install(dir, "app", ShimFiles.settingsOf(env)).toString())
                .directory(tmp.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        long start = System.nanoTime();
        Process p = pb.start();
        Stdin.feed(p, input);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(20, TimeUnit.SECONDS));
        return new Run(p.exitValue(), err, (System.nanoTime() - start) / 1_000_000);
    }

    static String closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return "http://127.0.0.1:" + s.getLocalPort();
        }
    }

    /**
     * On a local-path remote the hook runs in the pusher's environment: variables named like the shim's
     * settings must not change where it asks, as whom, or whether it judges at all.
     */
    @Test
    void thePushersEnvironmentCannotRepointTheShimOrTurnItIntoAPostReceive() throws Exception {
        // The file names a server that is down: a fenced push is refused, whatever the environment says.
        Path script = ShimFiles.install(
                tmp.resolve("env-shim"), "app", "FENCE_SERVER=" + closedPort() + "\nFENCE_CREDENTIAL=" + hook + "\n");
        for (Map<String, String> pusher : java.util.List.of(
                Map.of("FENCE_SERVER", t.url()),
                Map.of("FENCE_SHIM_HOOK", "post-receive"),
                Map.of("FENCE_SHIM_BUDGET", "0.05", "FENCE_SHIM_TRANSPORT", "nc"),
                Map.of("FENCE_CREDENTIAL", "evil:" + "x".repeat(43), "FENCE_SERVER", t.url()))) {
            Map<String, String> env =
                    new HashMap<>(Map.of("PATH", "/usr/bin:/bin", "REMOTE_USER", "alice", "HOME", tmp.toString()));
            env.putAll(pusher);
            ProcessBuilder pb = new ProcessBuilder("bash", script.toString()).directory(tmp.toFile());
            pb.environment().clear();
            pb.environment().putAll(env);
            Process p = pb.start();
            Stdin.feed(p, LINE);
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(20, TimeUnit.SECONDS));
            assertEquals(1, p.exitValue(), pusher + ": " + err);
            assertTrue(err.contains("reason=store-down"), pusher + ": " + err);
        }
    }

    /**
     * A proof is a bearer credential, and a command line is in every local user's process list
     * (/proc/PID/cmdline): the push options must reach curl the way the hook credential does, on its
     * standard input, and still arrive whole (the server reads the same pusher and options as over bash's
     * own transport).
     */
    @Test
    void curlsCommandLineCarriesNoPushOptionAndNoCredential() throws Exception {
        Path bin = tmp.resolve("recording-curl");
        Files.createDirectories(bin);
        Path argv = tmp.resolve("curl-argv");
        Path wrapper = bin.resolve("curl");
        Files.writeString(wrapper, "#!/bin/bash\nprintf '%s\\n' \"$@\" >> '" + argv + "'\nexec /usr/bin/curl \"$@\"\n");
        wrapper.toFile().setExecutable(true);
        Files.createSymbolicLink(bin.resolve("git"), Path.of("/usr/bin/git"));
        String proof = "fp2.AAAAAAAAAAAAAAAA.YWdlbnQtYQ." + "A".repeat(43);
        Map<String, String> env = new HashMap<>(Map.of(
                "PATH", bin + ":/usr/bin:/bin",
                "FENCE_SERVER", t.url(),
                "FENCE_CREDENTIAL", hook,
                "FENCE_SHIM_TRANSPORT", "curl",
                "REMOTE_USER", "a \"quoted\" \\ name é",
                "GIT_PUSH_OPTION_COUNT", "3",
                "GIT_PUSH_OPTION_0", "fence=7",
                "GIT_PUSH_OPTION_1", "fence-proof=" + proof,
                "GIT_PUSH_OPTION_2", "ci.skip"));
        Run r = shim(env);
        String args = Files.readString(argv);
        assertTrue(args.contains("/v1/hook/pre-receive"), args);
        assertTrue(!args.contains(proof) && !args.contains("fence-proof"), "a proof on curl's command line:\n" + args);
        assertTrue(!args.contains(hook.substring(hook.indexOf(':') + 1)), "the credential on curl's command line");
        // The server got the token and the proof, and judged them: FENCED, there is no such lease.
        assertEquals(1, r.exit(), r.err());
        assertTrue(r.err().contains("FENCED resource=git:app:refs/heads/main ref=refs/heads/main token=7"), r.err());
    }

    @Test
    void aReachableServerDecides() throws Exception {
        Run r = shim(Map.of("FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", hook));
        assertEquals(0, r.exit(), r.err());
        assertEquals("", r.err());
    }

    @Test
    void aServerOnThisHostIsAskedThroughBashAloneAndOthersThroughCurl() throws Exception {
        // A PATH with git and no curl: the shim's usual path on this host must not need curl. (head bounds
        // what curl's answer may be; without it the missing curl's message dies of SIGPIPE, exit 141.)
        Path bin = tmp.resolve("no-curl");
        Files.createDirectories(bin);
        Files.createSymbolicLink(bin.resolve("git"), Path.of("/usr/bin/git"));
        Files.createSymbolicLink(bin.resolve("head"), Path.of("/usr/bin/head"));
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
        // What cannot make a request is refused here; whether the server knows a credential is its to say.
        for (String credential : new String[] {"no-colon", "na me:secret", "name:sec\"ret"}) {
            Run r = shim(Map.of("FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", credential));
            assertEquals(1, r.exit(), credential);
            assertTrue(r.err().startsWith("REJECTED resource=- ref=- token=0 current=0 reason=bad-config\n"), r.err());
            assertTrue(r.err().contains("FENCE_CREDENTIAL is not <name>:<secret>"), r.err());
        }
        for (String credential : new String[] {":secret", "name:", "name:sec:ret"}) {
            Run r = shim(Map.of("FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", credential));
            assertEquals(1, r.exit(), credential);
            assertTrue(r.err().startsWith("REJECTED resource=- ref=- token=0 current=0 reason=bad-config\n"), r.err());
            assertTrue(r.err().contains("refused this hook's credential (HTTP 401"), r.err());
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
    void anUnreachableServerClosesFencedRefsWhateverThePushAndLetsOthersThrough() throws Exception {
        String down = closedPort();
        String main =
                "REJECTED resource=git:app:refs/heads/main ref=refs/heads/main token=0 current=0 reason=store-down";
        Run reject = shim(Map.of("FENCE_SERVER", down, "FENCE_CREDENTIAL", hook));
        assertEquals(1, reject.exit());
        assertTrue(
                reject.err().startsWith(main + "\nfence: the fence server is unavailable (curl exit 7"), reject.err());

        // The old FENCE_ON_SERVER_DOWN=accept is no setting any more: it changes nothing.
        Run accept = shim(Map.of("FENCE_SERVER", down, "FENCE_CREDENTIAL", hook, "FENCE_ON_SERVER_DOWN", "accept"));
        assertEquals(1, accept.exit(), accept.err());
        assertTrue(accept.err().startsWith(main + "\n"), accept.err());

        Run token = shim(Map.of(
                "FENCE_SERVER",
                down,
                "FENCE_CREDENTIAL",
                hook,
                "GIT_PUSH_OPTION_COUNT",
                "1",
                "GIT_PUSH_OPTION_0",
                "fence=12"));
        assertEquals(1, token.exit(), token.err());
        assertTrue(token.err().startsWith(main + "\n"), token.err());

        // A pusher's environment cannot make a ref unfenced, nor rename the resource.
        Run env = shim(Map.of(
                "FENCE_SERVER",
                down,
                "FENCE_CREDENTIAL",
                hook,
                "FENCE_FENCED_REFS",
                "refs/nothing",
                "FENCE_REPO_ID",
                "other"));
        assertEquals(1, env.exit(), env.err());
        assertTrue(env.err().startsWith(main + "\n"), env.err());

        String zero = "0".repeat(40);
        String six = "6".repeat(40);
        Run tags = shim(
                Map.of("FENCE_SERVER", down, "FENCE_CREDENTIAL", hook),
                zero + " " + six + " refs/tags/v1\n" + zero + " " + six + " refs/notes/x\n");
        assertEquals(0, tags.exit(), tags.err());
        assertEquals("", tags.err());
        // A namespace's branch pushed by its stored name from outside the namespace is that branch: closed.
        Run namespaced = shim(
                Map.of("FENCE_SERVER", down, "FENCE_CREDENTIAL", hook),
                zero + " " + six + " refs/namespaces/t1/refs/tags/v1\n" + zero + " " + six
                        + " refs/namespaces/t1/refs/namespaces/t2/refs/heads/main\n");
        assertEquals(1, namespaced.exit(), namespaced.err());
        assertTrue(
                namespaced
                        .err()
                        .startsWith("REJECTED resource=git:app:refs/namespaces/t1/refs/namespaces/t2/refs/heads/main"
                                + " ref=refs/namespaces/t1/refs/namespaces/t2/refs/heads/main token=0 current=0"
                                + " reason=store-down\nfence: "),
                namespaced.err());
        Run mixed = shim(
                Map.of("FENCE_SERVER", down, "FENCE_CREDENTIAL", hook),
                zero + " " + six + " refs/tags/v1\n" + zero + " " + six + " refs/heads/a/b\n");
        assertEquals(1, mixed.exit(), mixed.err());
        assertTrue(
                mixed.err()
                        .startsWith("REJECTED resource=git:app:refs/heads/a/b ref=refs/heads/a/b token=0 current=0"
                                + " reason=store-down\nfence: "),
                mixed.err());
    }

    /**
     * With the server out of reach, on a repository whose file system ignores case, another spelling of a
     * fenced ref is that ref: closed like it. Where case counts it is a ref of its own, outside the patterns.
     */
    @Test
    void anUnreachableServerClosesOtherSpellingsOfFencedRefsWhereCaseIsIgnored() throws Exception {
        Path git = tmp.resolve("case.git");
        Files.createDirectories(git);
        String zero = "0".repeat(40);
        String six = "6".repeat(40);
        String input = zero + " " + six + " refs/HEADS/main\n";
        String down = closedPort();
        Files.writeString(git.resolve("config"), "[core]\n\tbare = true\n\tignorecase = false\n");
        Run respected = shim(Map.of("FENCE_SERVER", down, "FENCE_CREDENTIAL", hook, "GIT_DIR", git.toString()), input);
        assertEquals(0, respected.exit(), respected.err());

        Files.writeString(git.resolve("config"), "[core]\n\tbare = true\n\tignoreCase = yes\n");
        Run ignored = shim(Map.of("FENCE_SERVER", down, "FENCE_CREDENTIAL", hook, "GIT_DIR", git.toString()), input);
        assertEquals(1, ignored.exit(), ignored.err());
        assertTrue(
                ignored.err()
                        .startsWith("REJECTED resource=git:app:refs/HEADS/main ref=refs/HEADS/main token=0 current=0"
                                + " reason=store-down\nfence: "),
                ignored.err());

        // Windows strips the dot that ends a directory's name; HFS+ passes over some invisible code points.
        Path script = ShimFiles.install(
                tmp.resolve("case-shim"),
                "app",
                "FENCE_SERVER=" + down + "\nFENCE_CREDENTIAL=" + hook + "\nFENCE_FENCED_REFS=refs/heads/main\n");
        for (String alias : List.of("refs/heads./main", "refs/heads/ma\u200cin", "refs/Heads./MA\ufeffIN")) {
            ProcessBuilder pb = new ProcessBuilder("bash", script.toString()).directory(tmp.toFile());
            pb.environment().clear();
            pb.environment()
                    .putAll(Map.of(
                            "PATH",
                            "/usr/bin:/bin",
                            "REMOTE_USER",
                            "alice",
                            "HOME",
                            tmp.toString(),
                            "GIT_DIR",
                            git.toString()));
            Process p = pb.start();
            Stdin.feed(p, zero + " " + six + " " + alias + "\n");
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(20, TimeUnit.SECONDS));
            assertEquals(1, p.exitValue(), alias + ": " + err);
            assertTrue(
                    err.startsWith("REJECTED resource=git:app:" + alias + " ref=" + alias + " token=0 current=0"
                            + " reason=store-down\nfence: "),
                    alias + ": " + err);
        }
    }

    @Test
    void aRepoIdFromTheShimsConfigurationFileNamesTheResource() throws Exception {
        Path script = ShimFiles.install(
                tmp.resolve("conf-shim"), "from-conf", "FENCE_SERVER=" + t.url() + "\nFENCE_CREDENTIAL=" + hook + "\n");
        ProcessBuilder pb = new ProcessBuilder("bash", script.toString()).directory(tmp.toFile());
        pb.environment().clear();
        // The environment's FENCE_REPO_ID is the pusher's on a local-path remote: never the repo id.
        pb.environment()
                .putAll(Map.of(
                        "PATH",
                        "/usr/bin:/bin",
                        "REMOTE_USER",
                        "alice",
                        "HOME",
                        tmp.toString(),
                        "FENCE_REPO_ID",
                        "env-id"));
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

    /**
     * The shim's background processes (git's early answer to the first update's ancestry, the watchdog over
     * a /dev/tcp request's budget) end with the shim, whether the server answered or could not be reached: a
     * watchdog that waited out its budget would keep a process on the git host, and signal a shim long gone.
     */
    @Test
    void itsBackgroundProcessesEndWithTheShimNotWithItsBudget() throws Exception {
        // Two ids git does not have: git is asked early in the background, and the shim then asks it again.
        String update = "1".repeat(40) + " " + "2".repeat(40) + " refs/heads/main\n";
        String[] servers = {t.url(), closedPort()};
        for (int i = 0; i < servers.length; i++) {
            Path dir = tmp.resolve("helper-" + i);
            Run r = shim(
                    dir,
                    Map.of("FENCE_SERVER", servers[i], "FENCE_CREDENTIAL", hook, "FENCE_SHIM_BUDGET", "60"),
                    update);
            assertTrue(r.millis() < 10_000, servers[i] + " took " + r.millis() + " ms: " + r.err());
            String script = dir.resolve("pre-receive").toString();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            List<ProcessHandle> left = running(script);
            while (!left.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(50);
                left = running(script);
            }
            assertEquals(List.of(), left, servers[i] + ": processes of the shim outlived it; " + r.err());
        }
    }

    /** The processes whose command line names {@code script}. */
    private static List<ProcessHandle> running(String script) {
        return ProcessHandle.allProcesses()
                .filter(h -> h.info().commandLine().map(c -> c.contains(script)).orElse(false))
                .toList();
    }

    @Test
    void aWrongCredentialOrMissingSettingIsABadConfiguration() throws Exception {
        Run wrong = shim(Map.of("FENCE_SERVER", t.url(), "FENCE_CREDENTIAL", "githost:" + "z".repeat(43)));
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
