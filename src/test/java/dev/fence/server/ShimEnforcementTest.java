package dev.fence.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.cli.Context;
import dev.fence.cli.Main;
import dev.fence.json.Json;
import dev.fence.testing.GitProcess;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.TestLauncher;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The enforcement scenarios pushed with the real git to three bare repositories, one per way in:
 *
 * <ul>
 *   <li>{@code direct}: the Java hook with its own SQLite store ({@code fence install --bare});
 *   <li>{@code shim}: {@code hooks/pre-receive-curl.sh} (and as post-receive) asking an in-process
 *       {@code fence serve};
 *   <li>{@code client}: the Java hook in server mode ({@code server = URL} in fence.conf) asking a second
 *       in-process server.
 * </ul>
 *
 * Each scenario runs the same steps on all three (same commits, so the same SHAs) and every push must
 * give the same exit code and the same message lines; token numbers (stores differ) and clock times are
 * normalised before comparing.
 */
@ProcessTest
class ShimEnforcementTest {
    private static final String CONFIG = "agent-pushers = bot-*\npusher-policy.carol = allow\n";
    private static final String ZERO = "0".repeat(40);

    @TempDir
    static Path tmp;

    static TestServer shimServer;
    static TestServer clientServer;
    static Path launcher;

    /** One way in: its repositories, its store or server, and how it leases. */
    static final class Side {
        final String name;
        final Path root;
        final Path bare;
        Path work;
        final Map<String, String> pushEnv;
        final String store;
        final TestServer server;
        final String agentCredential;
        final Map<String, Long> tokenRanks = new LinkedHashMap<>();
        int scenario;

        Side(String name, Path root, String store, TestServer server, String agentCredential, Map<String, String> env) {
            this.name = name;
            this.root = root;
            this.bare = root.resolve("app.git");
            this.store = store;
            this.server = server;
            this.agentCredential = agentCredential;
            this.pushEnv = env;
        }
    }

    static Side direct;
    static Side shim;
    static Side client;

    @BeforeAll
    static void setUp() throws IOException {
        launcher = TestLauncher.write(tmp.resolve("bin/fence"));

        shimServer = TestServer.start(tmp.resolve("shim-server"), "sqlite:" + tmp.resolve("shim.db"), CONFIG);
        clientServer = TestServer.start(tmp.resolve("client-server"), "sqlite:" + tmp.resolve("client.db"), CONFIG);
        String shimHook = shimServer.add("githost", Role.HOOK);
        String clientHook = clientServer.add("githost", Role.HOOK);

        direct = new Side("direct", tmp.resolve("direct"), "sqlite:" + tmp.resolve("direct.db"), null, null, Map.of());
        shim = new Side(
                "shim",
                tmp.resolve("shim"),
                null,
                shimServer,
                shimServer.add("agents", Role.AGENT, "agent-*"),
                Map.of());
        client = new Side(
                "client",
                tmp.resolve("client"),
                null,
                clientServer,
                clientServer.add("agents", Role.AGENT, "agent-*"),
                Map.of("FENCE_CREDENTIAL", clientHook));

        for (Side s : List.of(direct, shim, client)) {
            Files.createDirectories(s.root);
            GitProcess.run(s.root, env(), "init", "--bare", "-q", s.bare.toString());
        }
        // direct: the Java hook on its own store.
        assertEquals(
                0,
                fence(
                                Map.of(),
                                "install",
                                "--bare",
                                direct.bare.toString(),
                                "--launcher",
                                launcher.toString(),
                                "--store",
                                direct.store,
                                // fence serve applies a decision when it is made; so does the Java hook
                                // without its post-receive (Landings), which is what is compared here.
                                "--no-record-landed")
                        .exit());
        Files.writeString(direct.bare.resolve("fence.conf"), CONFIG, java.nio.file.StandardOpenOption.APPEND);
        // client: the Java hook asking fence serve.
        assertEquals(
                0,
                fence(
                                Map.of(),
                                "install",
                                "--bare",
                                client.bare.toString(),
                                "--launcher",
                                launcher.toString(),
                                "--no-record-landed")
                        .exit());
        Files.writeString(client.bare.resolve("fence.conf"), "server = " + clientServer.url() + "\n");
        // shim: the curl shim, as pre-receive and post-receive, installed by fence install from the server's
        // policy; only the credential is added to fence-shim.conf by hand, as README says.
        Run installed = fence(
                Map.of(),
                "install",
                "--bare",
                shim.bare.toString(),
                "--shim",
                "curl",
                "--server",
                shimServer.url(),
                "--config",
                shimServer.config.toString(),
                "--record-landed");
        assertEquals(0, installed.exit(), installed.out() + installed.err());
        Files.writeString(
                shim.bare.resolve("hooks/fence-shim.conf"),
                "FENCE_CREDENTIAL=" + shimHook + "\n",
                java.nio.file.StandardOpenOption.APPEND);
    }

    @AfterAll
    static void tearDown() {
        shimServer.close();
        clientServer.close();
    }

    static Map<String, String> env() {
        Map<String, String> env = new HashMap<>(GitProcess.cleanEnv(tmp));
        env.put("GIT_AUTHOR_DATE", "2026-11-29T12:00:00Z");
        env.put("GIT_COMMITTER_DATE", "2026-11-29T12:00:00Z");
        return env;
    }

    record Run(int exit, String out, String err) {}

    static Run fence(Map<String, String> extraEnv, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Map<String, String> e = new HashMap<>(env());
        e.putAll(extraEnv);
        int code = Main.run(
                new Context(
                        new ByteArrayInputStream(new byte[0]),
                        new PrintWriter(out, true),
                        new PrintWriter(err, true),
                        e,
                        Clock.systemUTC(),
                        tmp),
                args);
        return new Run(code, out.toString(), err.toString());
    }

    /** A fresh work tree per scenario, cloned from the (possibly non-empty) bare repository. */
    static void freshWork(Side s, String scenario) throws IOException {
        s.work = s.root.resolve("work-" + scenario);
        GitProcess.run(s.root, env(), "init", "-q", "-b", "main", s.work.toString());
        GitProcess.run(s.work, env(), "remote", "add", "origin", s.bare.toString());
    }

    /** A lease's token and proof. */
    record Lease(long token, String proof) {}

    static Lease acquire(Side s, String ref, String holder, String ttl) {
        return acquire(s, "app", ref, holder, ttl);
    }

    static Lease acquire(Side s, String repo, String ref, String holder, String ttl) {
        Run r = s.server == null
                ? fence(
                        Map.of(),
                        "lease",
                        "acquire",
                        "--store",
                        s.store,
                        "--repo",
                        repo,
                        "--ref",
                        ref,
                        "--holder",
                        holder,
                        "--ttl",
                        ttl,
                        "--json")
                : fence(
                        Map.of("FENCE_CREDENTIAL", s.agentCredential),
                        "lease",
                        "acquire",
                        "--server",
                        s.server.url(),
                        "--repo",
                        repo,
                        "--ref",
                        ref,
                        "--holder",
                        holder,
                        "--ttl",
                        ttl,
                        "--json");
        assertEquals(0, r.exit(), s.name + ": " + r.err());
        try {
            JsonNode n = Json.read(r.out().strip());
            return new Lease(n.get("token").asLong(), n.get("proof").asText());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static void commit(Side s, String file, String text) throws IOException {
        Files.writeString(s.work.resolve(file), text);
        GitProcess.run(s.work, env(), "add", file);
        GitProcess.run(s.work, env(), "commit", "-q", "-m", file + ": " + text.strip());
    }

    /** Pushes; returns the exit code and the hook's lines, normalised. */
    static List<String> push(Side s, Map<String, String> extra, String... args) {
        Map<String, String> e = new HashMap<>(env());
        e.putAll(s.pushEnv);
        e.putAll(extra);
        List<String> command = new ArrayList<>(List.of("push", "-q"));
        command.addAll(List.of(args));
        var r = GitProcess.runAllowingFailure(s.work, e, command.toArray(String[]::new));
        List<String> lines = new ArrayList<>();
        lines.add("exit=" + (r.exit() == 0 ? 0 : 1));
        for (String line : r.stderr().split("\n")) {
            if (line.startsWith("remote: ")) {
                lines.add(normalise(s, line.substring("remote: ".length()).stripTrailing()));
            }
        }
        return lines;
    }

    // Floors in ms (13 digits) before generations took microseconds (16 digits).
    private static final Pattern TOKEN = Pattern.compile("\\b1\\d{12}(\\d{3})?\\b");
    private static final Pattern TIME = Pattern.compile("\\b\\d\\d:\\d\\d:\\d\\dZ");

    static String normalise(Side s, String line) {
        Matcher m = TOKEN.matcher(line);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            long rank = s.tokenRanks.computeIfAbsent(m.group(), k -> (long) s.tokenRanks.size() + 1);
            m.appendReplacement(out, "T" + rank);
        }
        m.appendTail(out);
        return TIME.matcher(out).replaceAll("HH:MM:SSZ");
    }

    /** Runs {@code steps} on every side and checks that each push gave the same output everywhere. */
    static List<List<String>> onEverySide(String scenario, Steps steps) throws Exception {
        Map<String, List<List<String>>> results = new LinkedHashMap<>();
        for (Side s : List.of(direct, shim, client)) {
            s.tokenRanks.clear();
            freshWork(s, scenario);
            List<List<String>> pushes = new ArrayList<>();
            steps.run(s, pushes);
            results.put(s.name, pushes);
        }
        assertEquals(
                results.get("direct"), results.get("shim"), scenario + ": the curl shim differs from the Java hook");
        assertEquals(
                results.get("direct"),
                results.get("client"),
                scenario + ": the Java client differs from the Java hook");
        return results.get("direct");
    }

    @FunctionalInterface
    interface Steps {
        void run(Side s, List<List<String>> pushes) throws Exception;
    }

    static String proofArg(Lease l) {
        return "fence-proof=" + l.proof();
    }

    static Map<String, String> pusher(String name) {
        return Map.of("REMOTE_USER", name);
    }

    /**
     * Git updates a symbolic ref's target. The server cannot see the repository: the shim and the Java
     * client send where each pushed symbolic ref leads, and the server decides with the Java hook's code
     * and lines; pushed together with its target and the same ids, git skips the symbolic ref's update,
     * and so does every side.
     */
    @Test
    void aPushToASymbolicRefIsRefusedAlikeOnEverySide() throws Exception {
        var pushes = onEverySide("symref", (s, p) -> {
            commit(s, "s.txt", "base\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/sym-main"));
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/heads/sym-alias", "refs/heads/sym-main");
            commit(s, "s.txt", "through the alias\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/sym-alias"));
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/sym-main", "HEAD:refs/heads/sym-alias"));
        });
        assertEquals(List.of("exit=0"), pushes.get(0));
        assertEquals(
                List.of(
                        "exit=1",
                        "REJECTED ref=refs/heads/sym-alias reason=symbolic-ref",
                        "fence: refs/heads/sym-alias is a symbolic ref to refs/heads/sym-main: git would update"
                                + " refs/heads/sym-main, which fence guards under its own name. Push to"
                                + " refs/heads/sym-main itself instead (for example: git push origin"
                                + " <commit>:refs/heads/sym-main, with the lease options for refs/heads/sym-main).",
                        "fence: the push was refused as a whole; nothing was recorded. Pushing under another name"
                                + " that points at the same ref is refused the same way."),
                pushes.get(1));
        assertEquals("exit=0", pushes.get(2).get(0), pushes.get(2).toString());
    }

    /**
     * The server knows its fenced patterns: a symbolic ref outside them that leads into a fenced ref is
     * refused on every side with the same lines, and one that leads outside them passes on every side (the
     * shim and the Java client refused every symbolic ref while they decided without the patterns).
     */
    @Test
    void theServerDecidesSymbolicRefsWithItsPatternsAlikeOnEverySide() throws Exception {
        var pushes = onEverySide("symref-patterns", (s, p) -> {
            commit(s, "t.txt", "base\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/sym-fenced", "HEAD:refs/notes/sym-open"));
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/notes/sym-into", "refs/heads/sym-fenced");
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/notes/sym-via", "refs/notes/sym-into");
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/notes/sym-out", "refs/notes/sym-open");
            commit(s, "t.txt", "next\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/notes/sym-via"));
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/notes/sym-out"));
            p.add(push(s, pusher("bot-7"), "origin", "HEAD:refs/notes/sym-out"));
        });
        assertEquals(List.of("exit=0"), pushes.get(0));
        assertEquals(
                List.of(
                        "exit=1",
                        "REJECTED ref=refs/notes/sym-via reason=symbolic-ref",
                        "fence: refs/notes/sym-via is a symbolic ref to refs/notes/sym-into -> refs/heads/sym-fenced:"
                                + " git would update refs/heads/sym-fenced, which fence guards under its own name. Push to"
                                + " refs/heads/sym-fenced itself instead (for example: git push origin"
                                + " <commit>:refs/heads/sym-fenced, with the lease options for refs/heads/sym-fenced).",
                        "fence: the push was refused as a whole; nothing was recorded. Pushing under another name"
                                + " that points at the same ref is refused the same way."),
                pushes.get(1));
        assertEquals(List.of("exit=0"), pushes.get(2), "a symbolic ref that leads outside the patterns");
        assertEquals(List.of("exit=0"), pushes.get(3), "an agent's push outside the patterns needs no token");
    }

    /** The tip of {@code ref} in {@code s}'s bare repository, or null when it does not exist. */
    static String tip(Side s, String ref) {
        var r = GitProcess.runAllowingFailure(s.bare, env(), "rev-parse", "-q", "--verify", ref);
        return r.exit() == 0 ? r.stdout().strip() : null;
    }

    /**
     * A namespaced host keeps {@code refs/namespaces/<ns>/HEAD} as a symbolic ref to the namespace's main. A
     * push to it from outside the namespace (a URL that sets no namespace) makes git write or delete that
     * main, which fence leases as {@code git:app//<ns>:refs/heads/main}: it was let through unrecorded, as
     * was one through any other name that leads there. Refused on every side, and the pusher is told to push
     * through the namespace.
     */
    @Test
    void aSymbolicRefIntoANamespacesFencedBranchIsRefusedAlikeOnEverySide() throws Exception {
        String nsMain = "refs/namespaces/nh/refs/heads/main";
        var pushes = onEverySide("ns-head", (s, p) -> {
            commit(s, "n.txt", "base\n");
            p.add(push(s, Map.of("REMOTE_USER", "alice", "GIT_NAMESPACE", "nh"), "origin", "HEAD:refs/heads/main"));
            String base = tip(s, nsMain);
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/namespaces/nh/HEAD", nsMain);
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/notes/nh-alias", nsMain);
            commit(s, "n.txt", "from outside the namespace\n");
            p.add(push(s, pusher("alice"), "origin", "+HEAD:refs/namespaces/nh/HEAD"));
            p.add(push(s, pusher("alice"), "origin", ":refs/namespaces/nh/HEAD"));
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/notes/nh-alias"));
            assertEquals(base, tip(s, nsMain), s.name + ": the namespace's main did not move");
        });
        assertEquals(List.of("exit=0"), pushes.get(0));
        String through = "fence: refs/namespaces/nh/HEAD is a symbolic ref to " + nsMain + ": git would update "
                + nsMain + ", which is refs/heads/main of git namespace nh, a ref fence guards there. Push to"
                + " refs/heads/main through that namespace (GIT_NAMESPACE=nh) instead, with the lease options for it.";
        String whole = "fence: the push was refused as a whole; nothing was recorded. Pushing under another name"
                + " that points at the same ref is refused the same way.";
        assertEquals(
                List.of("exit=1", "REJECTED ref=refs/namespaces/nh/HEAD reason=symbolic-ref", through, whole),
                pushes.get(1));
        assertEquals(
                List.of("exit=1", "REJECTED ref=refs/namespaces/nh/HEAD reason=symbolic-ref", through, whole),
                pushes.get(2),
                "a delete through it");
        assertEquals(
                "REJECTED ref=refs/notes/nh-alias reason=symbolic-ref",
                pushes.get(3).get(1),
                pushes.toString());
    }

    /**
     * Inside a namespace, git resolves a pushed name under the namespace's prefix: with {@code
     * refs/namespaces/na/refs/heads/master} a symbolic ref to the namespace's main, {@code GIT_NAMESPACE=na git
     * push HEAD:refs/heads/master} writes na's main. The shim read {@code refs/heads/master} without the
     * prefix, sent no fact, and the server bumped master while main moved.
     */
    @Test
    void aSymbolicRefInsideANamespaceIsRefusedAlikeOnEverySide() throws Exception {
        String nsMain = "refs/namespaces/na/refs/heads/main";
        Map<String, String> inNa = Map.of("REMOTE_USER", "alice", "GIT_NAMESPACE", "na");
        var pushes = onEverySide("ns-alias", (s, p) -> {
            commit(s, "m.txt", "base\n");
            p.add(push(s, inNa, "origin", "HEAD:refs/heads/main"));
            String base = tip(s, nsMain);
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/namespaces/na/refs/heads/master", nsMain);
            commit(s, "m.txt", "through the alias\n");
            p.add(push(s, inNa, "origin", "HEAD:refs/heads/master"));
            p.add(push(s, inNa, "origin", ":refs/heads/master"));
            assertEquals(base, tip(s, nsMain), s.name + ": the namespace's main did not move");
        });
        assertEquals(List.of("exit=0"), pushes.get(0));
        List<String> refused = List.of(
                "exit=1",
                "REJECTED ref=refs/heads/master reason=symbolic-ref",
                "fence: refs/heads/master is a symbolic ref to refs/heads/main: git would update refs/heads/main,"
                        + " which fence guards under its own name. Push to refs/heads/main itself instead (for"
                        + " example: git push origin <commit>:refs/heads/main, with the lease options for"
                        + " refs/heads/main).",
                "fence: the push was refused as a whole; nothing was recorded. Pushing under another name"
                        + " that points at the same ref is refused the same way.");
        assertEquals(refused, pushes.get(1));
        assertEquals(refused, pushes.get(2), "a delete through it");
    }

    /**
     * A symbolic ref inside a namespace whose target is outside it ({@code refs/heads/main}, the repository's
     * own): without its prefix the target read as the namespace's main, and pushed beside that main with the
     * same ids it was waved through as "git applies the target's line" (git 2.39's receive-pack then crashes;
     * a git that wrote through it would move the repository's main). Refused on every side.
     */
    @Test
    void aSymbolicRefInANamespaceWhoseTargetLeavesItIsRefusedAlikeOnEverySide() throws Exception {
        Map<String, String> inNo = Map.of("REMOTE_USER", "alice", "GIT_NAMESPACE", "no");
        var pushes = onEverySide("ns-out", (s, p) -> {
            commit(s, "o.txt", "base\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/main"));
            p.add(push(s, inNo, "origin", "HEAD:refs/heads/main"));
            String base = tip(s, "refs/heads/main");
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/namespaces/no/refs/notes/out", "refs/heads/main");
            commit(s, "o.txt", "through the way out\n");
            p.add(push(s, inNo, "origin", "HEAD:refs/notes/out", "HEAD:refs/heads/main"));
            assertEquals(base, tip(s, "refs/heads/main"), s.name + ": the repository's main did not move");
        });
        assertEquals(List.of("exit=0"), pushes.get(0));
        assertEquals(List.of("exit=0"), pushes.get(1));
        assertEquals(
                "REJECTED ref=refs/notes/out reason=symbolic-ref", pushes.get(2).get(1), pushes.toString());
        assertTrue(
                String.join("\n", pushes.get(2)).contains("its target is outside the push's git namespace"),
                pushes.toString());
    }

    /**
     * A namespace's branches are resources of {@code <repo id>//<namespace>} on every side. The Java hook in
     * server mode sent a repo id it had already namespaced, and the server namespaced it again ({@code
     * app//nl//nl}): a lease on {@code app//nl} was refused, and its bumps recorded under another resource.
     */
    @Test
    void aNamespacesBranchIsTheSameResourceOnEverySide() throws Exception {
        var pushes = onEverySide("ns-lease", (s, p) -> {
            commit(s, "l.txt", "base\n");
            p.add(push(s, Map.of("REMOTE_USER", "alice", "GIT_NAMESPACE", "nl"), "origin", "HEAD:refs/heads/main"));
            Lease l = acquire(s, "app//nl", "main", "agent-1", "30s");
            commit(s, "l.txt", "under the lease\n");
            Map<String, String> bot = Map.of("REMOTE_USER", "bot-7", "GIT_NAMESPACE", "nl");
            p.add(push(s, bot, "-o", "fence=" + l.token(), "-o", proofArg(l), "origin", "HEAD:refs/heads/main"));
            commit(s, "l.txt", "without it\n");
            p.add(push(s, bot, "origin", "HEAD:refs/heads/main"));
        });
        assertEquals(List.of("exit=0"), pushes.get(0));
        assertEquals(List.of("exit=0"), pushes.get(1), "the lease on app//nl writes nl's main");
        assertEquals(
                "FENCED resource=git:app//nl:refs/heads/main ref=refs/heads/main token=0 current=T1"
                        + " reason=token-required",
                pushes.get(2).get(1),
                pushes.toString());
    }

    /**
     * No verdict from the server (it is down, or refuses the hook's credential): the shim and the Java client
     * refuse every push to a symbolic ref, even one that leads outside the patterns, with the same lines.
     */
    @Test
    void withoutTheServerEveryPushToASymbolicRefIsRefusedAlikeInTheShimAndTheJavaClient() throws Exception {
        String unjudged = "fence: the fence server did not judge this push, so pushes to symbolic refs are refused"
                + " (git would update their targets, which may be fenced). Push to the target's name instead.";
        Map<String, List<List<String>>> results = new LinkedHashMap<>();
        for (Side s : List.of(shim, client)) {
            freshWork(s, "symref-down");
            commit(s, "d.txt", "base\n");
            List<List<String>> pushes = new ArrayList<>();
            pushes.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/sym-d", "HEAD:refs/notes/sym-d"));
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/notes/sym-d-out", "refs/notes/sym-d");
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/heads/sym-d-alias", "refs/heads/sym-d");
            commit(s, "d.txt", "next\n");
            try (AutoCloseable restore = cutOff(s)) {
                pushes.add(push(s, pusher("alice"), "origin", "HEAD:refs/notes/sym-d-out"));
                pushes.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/sym-d-alias"));
                pushes.add(push(s, pusher("alice"), "origin", "HEAD:refs/tags/v-sym-d"));
            }
            pushes.add(push(s, pusher("alice"), "origin", "HEAD:refs/notes/sym-d-out"));
            results.put(s.name, pushes);
        }
        List<List<String>> said = results.get("shim");
        assertEquals(said.get(1), results.get("client").get(1), "the same lines");
        assertEquals(machineLines(said), machineLines(results.get("client")));
        assertEquals(List.of("exit=0"), said.get(0));
        assertEquals(List.of("exit=1", "REJECTED ref=refs/notes/sym-d-out reason=symbolic-ref", unjudged), said.get(1));
        assertEquals(
                List.of(
                        "exit=1",
                        "REJECTED ref=refs/heads/sym-d-alias reason=symbolic-ref",
                        "REJECTED resource=git:app:refs/heads/sym-d-alias ref=refs/heads/sym-d-alias token=0 current=0"
                                + " reason=store-down"),
                machineLines(said).get(2));
        assertEquals(unjudged, said.get(2).get(said.get(2).size() - 1));
        assertEquals("exit=0", said.get(3).get(0), "a plain push outside the patterns still passes");
        assertEquals(List.of("exit=0"), said.get(4), "back up: the server decides again");
    }

    /**
     * A repository whose file system ignores case ({@code core.ignorecase = true}) keeps every spelling of a
     * ref as one file. The server cannot see the repository: the shim and the Java client send whether it
     * ignores case and the spellings it has of the pushed refs (loose refs, directories and packed-refs), and
     * the server refuses another spelling of a fenced ref with the Java hook's code and lines.
     */
    @Test
    void anotherSpellingOfAFencedRefIsRefusedAlikeOnEverySide() throws Exception {
        var pushes = onEverySide("case", (s, p) -> {
            GitProcess.run(s.bare, env(), "config", "core.ignorecase", "true");
            try {
                commit(s, "c.txt", "base\n");
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/ci-main", "HEAD:refs/heads/Ci-Dir/x"));
                commit(s, "c.txt", "through another spelling\n");
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/CI-MAIN"));
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/HEADS/ci-main"));
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/ci-dir/y"));
                // Packed, as after git gc: packed-refs keeps the spelling.
                GitProcess.run(s.bare, env(), "pack-refs", "--all");
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/Ci-Main"));
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/ci-other", "HEAD:refs/heads/CI-OTHER"));
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/ci-main", "HEAD:refs/heads/Ci-Dir/y"));
                // Windows strips the dot that ends a directory's name: these write ci-main and Ci-Dir/z.
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads./ci-main"));
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/ci-dir./z"));
            } finally {
                GitProcess.run(s.bare, env(), "config", "core.ignorecase", "false");
            }
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/CI-MAIN"));
        });
        assertEquals(List.of("exit=0"), pushes.get(0));
        assertEquals(
                List.of(
                        "exit=1",
                        "REJECTED ref=refs/heads/CI-MAIN reason=ref-case-alias",
                        "fence: refs/heads/CI-MAIN and refs/heads/ci-main are one ref: this repository's file system"
                                + " ignores case in ref names (core.ignorecase), and on macOS Unicode normalisation"
                                + " and some invisible characters too, on Windows a dot that ends a directory's name,"
                                + " so git keeps both spellings as one file, which fence guards as refs/heads/ci-main."
                                + " Push to refs/heads/ci-main instead, with its lease."),
                pushes.get(1));
        assertEquals(
                "REJECTED ref=refs/HEADS/ci-main reason=ref-case-alias",
                pushes.get(2).get(1));
        assertTrue(
                pushes.get(3).get(2).contains("refs/heads/Ci-Dir/y"),
                pushes.get(3).toString());
        assertEquals(
                "REJECTED ref=refs/heads/Ci-Main reason=ref-case-alias",
                pushes.get(4).get(1));
        assertEquals(5, pushes.get(5).size(), "both spellings of one new branch: " + pushes.get(5));
        assertEquals(List.of("exit=0"), pushes.get(6), "spelled as the repository has them");
        assertEquals(
                List.of(
                        "exit=1",
                        "REJECTED ref=refs/heads./ci-main reason=ref-case-alias",
                        "fence: refs/heads./ci-main is another spelling of refs/heads/ci-main, a fenced ref: this"
                                + " repository's file system ignores case in ref names (core.ignorecase), and on macOS"
                                + " Unicode normalisation and some invisible characters too, on Windows a dot that ends"
                                + " a directory's name, so git would write that ref under a name fence does not guard."
                                + " Push to refs/heads/ci-main itself, with its lease."),
                pushes.get(7));
        assertEquals(
                "REJECTED ref=refs/heads/ci-dir./z reason=ref-case-alias",
                pushes.get(8).get(1));
        assertTrue(
                pushes.get(8).get(2).contains("refs/heads/Ci-Dir/z"),
                pushes.get(8).toString());
        assertEquals(List.of("exit=0"), pushes.get(9), "where case counts, another spelling is another branch");
    }

    /**
     * Inside a namespace a pushed ref's spellings are those the namespace has (its refs are stored under
     * its prefix): the shim looked for them among the repository's own refs, found none, and the server
     * took {@code refs/heads/NC-MAIN} for a new branch while git writes the namespace's {@code nc-main}.
     */
    @Test
    void anotherSpellingOfAFencedRefInsideANamespaceIsRefusedAlikeOnEverySide() throws Exception {
        Map<String, String> inNc = Map.of("REMOTE_USER", "alice", "GIT_NAMESPACE", "nc");
        var pushes = onEverySide("ns-case", (s, p) -> {
            GitProcess.run(s.bare, env(), "config", "core.ignorecase", "true");
            try {
                commit(s, "c.txt", "base\n");
                p.add(push(s, inNc, "origin", "HEAD:refs/heads/nc-main", "HEAD:refs/heads/Nc-Dir/x"));
                commit(s, "c.txt", "through another spelling\n");
                p.add(push(s, inNc, "origin", "HEAD:refs/heads/NC-MAIN"));
                GitProcess.run(s.bare, env(), "pack-refs", "--all");
                p.add(push(s, inNc, "origin", "HEAD:refs/heads/nc-dir/y"));
            } finally {
                GitProcess.run(s.bare, env(), "config", "core.ignorecase", "false");
            }
        });
        assertEquals(List.of("exit=0"), pushes.get(0));
        assertEquals(
                "REJECTED ref=refs/heads/NC-MAIN reason=ref-case-alias",
                pushes.get(1).get(1),
                pushes.toString());
        assertEquals(
                "REJECTED ref=refs/heads/nc-dir/y reason=ref-case-alias",
                pushes.get(2).get(1),
                pushes.toString());
    }

    /**
     * The namespace's own spelling: where the file system ignores case, {@code refs/namespaces/NS} is the
     * directory of namespace {@code ns}, so {@code GIT_NAMESPACE=NS git push HEAD:refs/heads/ns-main} writes
     * ns's leased main. fence took it for a new branch of {@code <repo>//NS}, a resource with no lease and no
     * history. Each side refuses it and names the namespace's spelling, whether its refs are loose or packed,
     * and for a nested namespace whose outer component is spelled otherwise; only the push's fenced refs are
     * named, and the namespace as the repository spells it is let through. (Linux keeps both directories, so
     * nothing is ever written under the other spelling here.)
     */
    @Test
    void anotherSpellingOfANamespaceIsRefusedAlikeOnEverySide() throws Exception {
        Map<String, String> inNs = Map.of("REMOTE_USER", "alice", "GIT_NAMESPACE", "ns");
        Map<String, String> inNS = Map.of("REMOTE_USER", "alice", "GIT_NAMESPACE", "NS");
        Map<String, String> inNSInner = Map.of("REMOTE_USER", "alice", "GIT_NAMESPACE", "NS/inner");
        var pushes = onEverySide("ns-spelling", (s, p) -> {
            GitProcess.run(s.bare, env(), "config", "core.ignorecase", "true");
            try {
                commit(s, "n.txt", "base\n");
                p.add(push(s, inNs, "origin", "HEAD:refs/heads/ns-main"));
                commit(s, "n.txt", "through another spelling of the namespace\n");
                p.add(push(s, inNS, "origin", "HEAD:refs/heads/ns-main", "HEAD:refs/notes/ns-free"));
                p.add(push(s, inNSInner, "origin", "HEAD:refs/heads/ns-main"));
                GitProcess.run(s.bare, env(), "pack-refs", "--all");
                p.add(push(s, inNS, "origin", "HEAD:refs/heads/ns-main"));
                p.add(push(s, inNs, "origin", "HEAD:refs/heads/ns-main"));
            } finally {
                GitProcess.run(s.bare, env(), "config", "core.ignorecase", "false");
            }
        });
        assertEquals(List.of("exit=0"), pushes.get(0));
        List<String> refused = List.of(
                "exit=1",
                "REJECTED ref=refs/heads/ns-main reason=ref-case-alias",
                "fence: GIT_NAMESPACE=NS and ns are one namespace: this repository's file system ignores case in"
                        + " ref names (core.ignorecase), and on macOS Unicode normalisation and some invisible"
                        + " characters too, on Windows a dot that ends a directory's name, so git would write"
                        + " refs/heads/ns-main of namespace ns, which fence guards as that namespace's. Push with"
                        + " GIT_NAMESPACE=ns instead, with its lease.");
        assertEquals(refused, pushes.get(1), "only the fenced ref is refused: " + pushes);
        assertEquals(
                "fence: GIT_NAMESPACE=NS/inner and ns/inner are one namespace: this repository's file system"
                        + " ignores case in ref names (core.ignorecase), and on macOS Unicode normalisation and"
                        + " some invisible characters too, on Windows a dot that ends a directory's name, so git"
                        + " would write refs/heads/ns-main of namespace ns/inner, which fence guards as that"
                        + " namespace's. Push with GIT_NAMESPACE=ns/inner instead, with its lease.",
                pushes.get(2).get(2),
                pushes.toString());
        assertEquals(refused, pushes.get(3), "packed: " + pushes);
        assertEquals(List.of("exit=0"), pushes.get(4), "the namespace as the repository spells it");
    }

    /**
     * HFS+ passes over some invisible code points in a name, so {@code hfs-ma}, U+200C, {@code in} is the
     * file of {@code hfs-main}. The shim compares ASCII letters only and cannot look for such spellings: the
     * server takes a fenced name with one in no spelling at all (CaseAliases' rule for such a client), so the
     * push is refused on every side, in a sentence of each side's own.
     */
    @Test
    void aSpellingHfsMakesOneFileWithAFencedRefIsRefusedOnEverySide() throws Exception {
        var pushes = machineLinesOnEverySide("case-hfs", (s, p) -> {
            GitProcess.run(s.bare, env(), "config", "core.ignorecase", "true");
            try {
                commit(s, "h.txt", "base\n");
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/hfs-main"));
                commit(s, "h.txt", "through an invisible spelling\n");
                // A UTF-8 locale, as a macOS JVM names files in UTF-8 whatever the locale (see RefCaseAliasTest).
                Map<String, String> utf8 = Map.of("REMOTE_USER", "alice", "LC_ALL", "C.UTF-8");
                p.add(push(s, utf8, "origin", "HEAD:refs/heads/hfs-ma\u200cin"));
                p.add(push(s, utf8, "origin", "HEAD:refs/HEADS/hfs-ma\ufeffin"));
            } finally {
                GitProcess.run(s.bare, env(), "config", "core.ignorecase", "false");
            }
        });
        assertEquals(List.of("exit=0"), pushes.get(0));
        assertEquals(List.of("exit=1", "REJECTED ref=refs/heads/hfs-ma\u200cin reason=ref-case-alias"), pushes.get(1));
        assertEquals(List.of("exit=1", "REJECTED ref=refs/HEADS/hfs-ma\ufeffin reason=ref-case-alias"), pushes.get(2));
    }

    @Test
    void currentTokenIsAcceptedAndAForeignForcePushIsFencedButYourOwnIsNot() throws Exception {
        var pushes = onEverySide("a", (s, p) -> {
            commit(s, "a.txt", "base\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/a"));
            Lease one = acquire(s, "a", "agent-1", "600ms");
            commit(s, "a.txt", "one\n");
            p.add(push(
                    s,
                    pusher("agent-1"),
                    "-o",
                    "fence=" + one.token(),
                    "-o",
                    proofArg(one),
                    "origin",
                    "HEAD:refs/heads/a"));
            String x = GitProcess.run(s.work, env(), "rev-parse", "HEAD");
            Thread.sleep(700);
            Lease two = acquire(s, "a", "agent-2", "30s");
            // agent-2 rewrites history from the base: it would discard agent-1's commit.
            GitProcess.run(s.work, env(), "reset", "-q", "--hard", "HEAD~1");
            commit(s, "b.txt", "rewrite\n");
            p.add(push(
                    s,
                    pusher("agent-2"),
                    "-f",
                    "-o",
                    "fence=" + two.token(),
                    "-o",
                    proofArg(two),
                    "origin",
                    "HEAD:refs/heads/a"));
            // agent-2 builds on agent-1's commit, then rewrites only its own work: allowed (the server must ask
            // whether x is in the new tip, which the shim answers with git merge-base).
            GitProcess.run(s.work, env(), "reset", "-q", "--hard", x);
            commit(s, "c.txt", "mine\n");
            p.add(push(
                    s,
                    pusher("agent-2"),
                    "-o",
                    "fence=" + two.token(),
                    "-o",
                    proofArg(two),
                    "origin",
                    "HEAD:refs/heads/a"));
            GitProcess.run(s.work, env(), "commit", "-q", "--amend", "-m", "mine, amended");
            p.add(push(
                    s,
                    pusher("agent-2"),
                    "-f",
                    "-o",
                    "fence=" + two.token(),
                    "-o",
                    proofArg(two),
                    "origin",
                    "HEAD:refs/heads/a"));
        });
        assertEquals(List.of("exit=0"), pushes.get(0), "a tokenless creation is accepted");
        assertEquals(List.of("exit=0"), pushes.get(1), "the current token is accepted");
        assertTrue(
                pushes.get(2).get(1).startsWith("FENCED resource=git:app:refs/heads/a ref=refs/heads/a token=T")
                        && pushes.get(2).get(1).endsWith("reason=foreign-overwrite"),
                pushes.get(2).toString());
        assertEquals(List.of("exit=0"), pushes.get(3));
        assertEquals(List.of("exit=0"), pushes.get(4), "rewriting your own commits is allowed");
        assertTrue(shimServer.server() != null);
        String metrics = shimServer.get("/metrics", null, null).body();
        assertTrue(
                metrics.contains(
                        "fence_hook_verdicts_total{hook=\"pre-receive\",reason=\"ancestry\",verdict=\"need\"}"),
                "the shim went through an ancestry round trip:\n" + metrics);
    }

    /**
     * A replace ref (an unfenced ref any pusher may write) makes git read another commit in place of the
     * pushed one; ancestry must be the pushed objects' own on every side, or a rewrite passes as a
     * fast-forward.
     */
    @Test
    void aReplaceRefCannotMakeARewriteLookLikeAFastForwardOnAnySide() throws Exception {
        var pushes = onEverySide("replace", (s, p) -> {
            commit(s, "r.txt", "base\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/r"));
            Lease one = acquire(s, "r", "agent-1", "600ms");
            commit(s, "r.txt", "one\n");
            p.add(push(
                    s,
                    pusher("agent-1"),
                    "-o",
                    "fence=" + one.token(),
                    "-o",
                    proofArg(one),
                    "origin",
                    "HEAD:refs/heads/r"));
            String x = GitProcess.run(s.work, env(), "rev-parse", "HEAD").strip();
            String tree =
                    GitProcess.run(s.work, env(), "rev-parse", "HEAD^{tree}").strip();
            String rewrite = GitProcess.run(s.work, env(), "commit-tree", "-p", x + "~1", "-m", "drops one", tree)
                    .strip();
            String fake = GitProcess.run(s.work, env(), "commit-tree", "-p", x, "-m", "stand-in", tree)
                    .strip();
            p.add(push(s, pusher("alice"), "origin", fake + ":refs/replace/" + rewrite));
            Thread.sleep(700);
            Lease two = acquire(s, "r", "agent-2", "30s");
            p.add(push(
                    s,
                    pusher("agent-2"),
                    "-f",
                    "-o",
                    "fence=" + two.token(),
                    "-o",
                    proofArg(two),
                    "origin",
                    rewrite + ":refs/heads/r"));
            p.add(push(s, pusher("alice"), "-f", "origin", rewrite + ":refs/heads/r"));
            assertEquals(
                    x,
                    GitProcess.run(s.bare, env(), "rev-parse", "refs/heads/r").strip(),
                    s.name);
        });
        assertEquals(List.of("exit=0"), pushes.get(2), "the replace ref itself is outside the patterns");
        assertTrue(
                pushes.get(3).size() > 1 && pushes.get(3).get(1).endsWith("reason=foreign-overwrite"),
                pushes.get(3).toString());
        assertTrue(
                pushes.get(4).size() > 1 && pushes.get(4).get(1).endsWith("reason=tokenless-overwrite"),
                pushes.get(4).toString());
    }

    @Test
    void staleTokenAfterASuccessorGrantIsFenced() throws Exception {
        var pushes = onEverySide("b", (s, p) -> {
            commit(s, "a.txt", "base\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/b"));
            Lease old = acquire(s, "b", "agent-1", "300ms");
            Thread.sleep(400);
            acquire(s, "b", "agent-2", "30s");
            commit(s, "a.txt", "late\n");
            p.add(push(
                    s,
                    pusher("agent-1"),
                    "-o",
                    "fence=" + old.token(),
                    "-o",
                    proofArg(old),
                    "origin",
                    "HEAD:refs/heads/b"));
        });
        assertEquals("exit=1", pushes.get(1).get(0));
        assertEquals(
                "FENCED resource=git:app:refs/heads/b ref=refs/heads/b token=T1 current=T2 reason=superseded",
                pushes.get(1).get(1));
        assertTrue(
                pushes.get(1).get(3).startsWith("Current lease holder: agent-2 (token T2)."),
                pushes.get(1).toString());
    }

    @Test
    void aTokenWithoutItsProofOrWithAnotherRefsProofIsFenced() throws Exception {
        var pushes = onEverySide("c", (s, p) -> {
            commit(s, "a.txt", "base\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/c"));
            Lease c = acquire(s, "c", "agent-1", "30s");
            Lease other = acquire(s, "other", "agent-1", "30s");
            commit(s, "a.txt", "next\n");
            p.add(push(s, pusher("agent-1"), "-o", "fence=" + c.token(), "origin", "HEAD:refs/heads/c"));
            p.add(push(
                    s,
                    pusher("agent-1"),
                    "-o",
                    "fence=" + c.token(),
                    "-o",
                    proofArg(other),
                    "origin",
                    "HEAD:refs/heads/c"));
            p.add(push(s, pusher("agent-1"), "-o", "fence=abc", "origin", "HEAD:refs/heads/c"));
        });
        assertTrue(
                pushes.get(1).get(1).endsWith("reason=bad-proof"), pushes.get(1).toString());
        assertTrue(
                pushes.get(2).get(1).endsWith("reason=bad-proof"), pushes.get(2).toString());
        assertEquals("REJECTED ref=- reason=malformed", pushes.get(3).get(1));
    }

    @Test
    void aTokenlessPushBumpsTheLeaseAndTheHolderIsThenFenced() throws Exception {
        var pushes = onEverySide("d", (s, p) -> {
            commit(s, "a.txt", "base\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/d"));
            Lease l = acquire(s, "d", "agent-1", "30s");
            commit(s, "a.txt", "human\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/d"));
            commit(s, "a.txt", "agent\n");
            p.add(push(
                    s,
                    pusher("agent-1"),
                    "-o",
                    "fence=" + l.token(),
                    "-o",
                    proofArg(l),
                    "origin",
                    "HEAD:refs/heads/d"));
        });
        assertEquals(
                List.of(
                        "exit=0",
                        "fence: this push superseded agent-1's lease on refs/heads/d (token T1 is now stale)"),
                pushes.get(1));
        // The bump raised the ref's highest token past the lease's: the storage rule fences it first.
        assertEquals(
                "FENCED resource=git:app:refs/heads/d ref=refs/heads/d token=T1 current=T2 reason=stale-token",
                pushes.get(2).get(1));
    }

    @Test
    void anAgentPusherWithoutATokenIsRefusedAndRefsOutsideThePatternsAreUntouched() throws Exception {
        var pushes = onEverySide("e", (s, p) -> {
            commit(s, "a.txt", "base\n");
            p.add(push(s, pusher("bot-7"), "origin", "HEAD:refs/heads/e"));
            p.add(push(s, pusher("bot-7"), "origin", "HEAD:refs/tags/v1-e"));
            p.add(push(s, pusher("bot-7"), "-o", "fence=1", "origin", "HEAD:refs/notes/e"));
        });
        assertEquals(
                "FENCED resource=git:app:refs/heads/e ref=refs/heads/e token=0 current=0 reason=token-required",
                pushes.get(0).get(1));
        assertEquals(List.of("exit=0"), pushes.get(1));
        assertEquals(List.of("exit=0"), pushes.get(2));
    }

    @Test
    void gitlabPushesGetGitlabPrefixesOnEveryLine() throws Exception {
        Map<String, String> gitlab =
                Map.of("GL_ID", "user-4", "GL_USERNAME", "agent-1", "GL_REPOSITORY", "project-9", "GL_PROTOCOL", "ssh");
        var pushes = onEverySide("f", (s, p) -> {
            commit(s, "a.txt", "base\n");
            p.add(push(s, gitlab, "-o", "fence=12", "-o", "fence-proof=fp1.abc.", "origin", "HEAD:refs/heads/f"));
            p.add(push(s, gitlab, "-o", "fence=12", "origin", "HEAD:refs/heads/f"));
        });
        assertEquals("exit=1", pushes.get(0).get(0));
        assertEquals("exit=1", pushes.get(1).get(0));
        for (String line : pushes.get(1).subList(1, pushes.get(1).size())) {
            assertTrue(line.startsWith("GL-HOOK-ERR: "), line);
        }
        assertEquals(
                "GL-HOOK-ERR: FENCED resource=git:project-9:refs/heads/f ref=refs/heads/f token=12 current=0"
                        + " reason=bad-proof",
                pushes.get(1).get(1));
    }

    /** The exit line and the machine lines (FENCED/REJECTED, after any host prefix) of each push. */
    static List<List<String>> machineLines(List<List<String>> pushes) {
        List<List<String>> out = new ArrayList<>();
        for (List<String> push : pushes) {
            List<String> kept = new ArrayList<>();
            for (String line : push) {
                String bare = line.startsWith("GL-HOOK-ERR: ") ? line.substring("GL-HOOK-ERR: ".length()) : line;
                if (bare.startsWith("exit=") || bare.startsWith("FENCED ") || bare.startsWith("REJECTED ")) {
                    kept.add(line);
                }
            }
            out.add(kept);
        }
        return out;
    }

    /**
     * As {@link #onEverySide}, comparing exit codes and machine lines only: the prose names each way's own
     * problem (a refused connection to a store, to a server, curl's words).
     */
    static List<List<String>> machineLinesOnEverySide(String scenario, Steps steps) throws Exception {
        Map<String, List<List<String>>> results = new LinkedHashMap<>();
        for (Side s : List.of(direct, shim, client)) {
            s.tokenRanks.clear();
            freshWork(s, scenario);
            List<List<String>> pushes = new ArrayList<>();
            steps.run(s, pushes);
            results.put(s.name, machineLines(pushes));
        }
        assertEquals(
                results.get("direct"), results.get("shim"), scenario + ": the curl shim differs from the Java hook");
        assertEquals(
                results.get("direct"),
                results.get("client"),
                scenario + ": the Java client differs from the Java hook");
        return results.get("direct");
    }

    static String closedUrl() throws IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            return "http://127.0.0.1:" + socket.getLocalPort();
        }
    }

    /**
     * Cuts {@code s} off from what decides: the direct hook's store (with {@code on-store-down = reject}: a
     * server that is down fails closed, and the direct hook is compared under the same rule), the shim's and
     * the client's server; returns what puts it back.
     */
    static AutoCloseable cutOff(Side s) throws IOException {
        String port = closedUrl().substring("http://127.0.0.1:".length());
        Path file = s == direct
                ? direct.bare.resolve("fence.conf")
                : s == shim ? shim.bare.resolve("hooks/fence-shim.conf") : client.bare.resolve("fence.conf");
        String before = Files.readString(file);
        String after = s == direct
                ? "store = redis://127.0.0.1:" + port + "\non-store-down = reject\n" + CONFIG
                : s == shim
                        ? before.replace("FENCE_SERVER=" + shimServer.url(), "FENCE_SERVER=http://127.0.0.1:" + port)
                        : "server = http://127.0.0.1:" + port + "\n";
        assertTrue(!after.equals(before), s.name);
        Files.writeString(file, after);
        return () -> Files.writeString(file, before);
    }

    /**
     * Store or server down: every update of a fenced ref is refused alike (a rewrite, a delete, an agent's
     * tokenless push, a push with a current token), tags and refs outside the patterns pass, and the three
     * ways in print the same machine lines.
     */
    @Test
    void whenNothingCanBeAskedFencedRefsAreClosedAndOthersPassAlikeOnEverySide() throws Exception {
        var pushes = machineLinesOnEverySide("down", (s, p) -> {
            commit(s, "a.txt", "base\n");
            p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/g", "HEAD:refs/heads/g2"));
            Lease l = acquire(s, "g", "agent-1", "30s");
            String base = GitProcess.run(s.work, env(), "rev-parse", "HEAD");
            commit(s, "a.txt", "next\n");
            try (AutoCloseable restore = cutOff(s)) {
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/heads/g"));
                p.add(push(s, pusher("bot-7"), "origin", "HEAD:refs/heads/g"));
                p.add(push(
                        s,
                        pusher("agent-1"),
                        "-o",
                        "fence=" + l.token(),
                        "-o",
                        proofArg(l),
                        "origin",
                        "HEAD:refs/heads/g"));
                p.add(push(s, pusher("bot-7"), "origin", "HEAD:refs/tags/v-down"));
                p.add(push(s, pusher("alice"), "origin", "HEAD:refs/notes/down"));
                p.add(push(
                        s,
                        pusher("alice"),
                        "origin",
                        "HEAD:refs/heads/g",
                        "HEAD:refs/tags/v-down-2",
                        "HEAD:refs/heads/g-new"));
                GitProcess.run(s.work, env(), "reset", "-q", "--hard", base);
                commit(s, "b.txt", "rewrite\n");
                p.add(push(s, pusher("alice"), "-f", "origin", "HEAD:refs/heads/g2"));
                p.add(push(s, pusher("alice"), "origin", ":refs/heads/g2"));
            }
            // Back up: the same rule as before.
            p.add(push(s, pusher("bot-7"), "origin", "HEAD:refs/heads/g-bot"));
        });
        String g = "REJECTED resource=git:app:refs/heads/g ref=refs/heads/g token=0 current=0 reason=store-down";
        assertEquals(List.of("exit=0"), pushes.get(0));
        for (int i = 1; i <= 3; i++) {
            assertEquals(List.of("exit=1", g), pushes.get(i), "push " + i);
        }
        assertEquals(List.of("exit=0"), pushes.get(4), "a tag passes");
        assertEquals(List.of("exit=0"), pushes.get(5), "a ref outside the patterns passes");
        assertEquals(
                List.of(
                        "exit=1",
                        g,
                        "REJECTED resource=git:app:refs/heads/g-new ref=refs/heads/g-new token=0 current=0"
                                + " reason=store-down"),
                pushes.get(6));
        String g2 = "REJECTED resource=git:app:refs/heads/g2 ref=refs/heads/g2 token=0 current=0 reason=store-down";
        assertEquals(List.of("exit=1", g2), pushes.get(7), "a rewrite");
        assertEquals(List.of("exit=1", g2), pushes.get(8), "a delete");
        assertEquals(
                List.of(
                        "exit=1",
                        "FENCED resource=git:app:refs/heads/g-bot ref=refs/heads/g-bot token=0 current=0"
                                + " reason=token-required"),
                pushes.get(9));
    }

    /**
     * A credential the server refuses is a broken configuration, said alike by the shim and the Java client
     * ({@code PreReceiveHook.misconfigured}): fenced refs closed, others through with a warning.
     */
    @Test
    void aRefusedCredentialClosesFencedRefsAlikeInTheShimAndTheJavaClient() throws Exception {
        Map<String, List<List<String>>> results = new LinkedHashMap<>();
        for (Side s : List.of(shim, client)) {
            freshWork(s, "credential");
            commit(s, "a.txt", "base\n");
            Path file = s == shim ? shim.bare.resolve("hooks/fence-shim.conf") : null;
            String before = file == null ? null : Files.readString(file);
            Map<String, String> wrong = new HashMap<>(pusher("alice"));
            if (file != null) {
                Files.writeString(
                        file,
                        before.replaceAll(
                                "FENCE_CREDENTIAL=githost:\\S+", "FENCE_CREDENTIAL=githost:" + "z".repeat(43)));
            } else {
                wrong.put("FENCE_CREDENTIAL", "githost:" + "z".repeat(43));
            }
            List<List<String>> pushes = new ArrayList<>();
            GitProcess.run(s.bare, env(), "symbolic-ref", "refs/notes/h-alias", "refs/notes/h");
            try {
                pushes.add(push(s, wrong, "origin", "HEAD:refs/heads/h"));
                pushes.add(push(s, wrong, "origin", "HEAD:refs/tags/v-h"));
                pushes.add(push(s, wrong, "origin", "HEAD:refs/notes/h-alias"));
            } finally {
                if (file != null) {
                    Files.writeString(file, before);
                }
            }
            results.put(s.name, pushes);
        }
        List<List<String>> shimSaid = results.get("shim");
        assertEquals(machineLines(shimSaid), machineLines(results.get("client")));
        assertEquals(
                List.of("exit=1", "REJECTED resource=- ref=- token=0 current=0 reason=bad-config"),
                machineLines(shimSaid).get(0));
        assertEquals("exit=0", shimSaid.get(1).get(0));
        assertTrue(shimSaid.get(1).get(1).startsWith("warning: fence configuration is broken ("), shimSaid.toString());
        assertEquals(
                List.of("exit=1", "REJECTED ref=refs/notes/h-alias reason=symbolic-ref"),
                machineLines(shimSaid).get(2),
                "a symbolic ref no server judged is refused, even outside the patterns");
        assertEquals(shimSaid.get(2), results.get("client").get(2));
        assertTrue(!shimSaid.toString().contains("z".repeat(43)), "never echo the credential");
    }

    /**
     * A landing records its decision: the reason, token and holder of the accept, bump or allow it lands,
     * whichever way the push came in. Each side records landings here: the Java hook with its post-receive
     * (which applies them, see Landings), the shim as post-receive, and the Java client with its
     * post-receive; read back through {@code fence audit --json}, from the store or the server.
     */
    @Test
    void aLandingRecordsTheReasonTokenAndHolderOfItsDecisionOnEverySide() throws Exception {
        Side landedDirect = new Side(
                "direct-landed",
                tmp.resolve("direct-landed"),
                "sqlite:" + tmp.resolve("direct-landed.db"),
                null,
                null,
                Map.of());
        Side landedClient = new Side(
                "client-landed",
                tmp.resolve("client-landed"),
                null,
                clientServer,
                client.agentCredential,
                Map.of("FENCE_CREDENTIAL", client.pushEnv.get("FENCE_CREDENTIAL")));
        for (Side s : List.of(landedDirect, landedClient)) {
            Files.createDirectories(s.root);
            GitProcess.run(s.root, env(), "init", "--bare", "-q", s.bare.toString());
            List<String> args =
                    new ArrayList<>(List.of("install", "--bare", s.bare.toString(), "--launcher", launcher.toString()));
            if (s.store != null) {
                args.addAll(List.of("--store", s.store));
            }
            Run installed = fence(Map.of(), args.toArray(String[]::new));
            assertEquals(0, installed.exit(), installed.out() + installed.err());
        }
        Files.writeString(landedDirect.bare.resolve("fence.conf"), CONFIG, java.nio.file.StandardOpenOption.APPEND);
        Files.writeString(landedClient.bare.resolve("fence.conf"), "server = " + clientServer.url() + "\n");

        Map<String, List<String>> landings = new LinkedHashMap<>();
        for (Side s : List.of(landedDirect, shim, landedClient)) {
            s.tokenRanks.clear();
            freshWork(s, "landings");
            commit(s, "l.txt", "base\n");
            assertEquals(List.of("exit=0"), push(s, pusher("alice"), "origin", "HEAD:refs/heads/land"));
            Lease l = acquire(s, "land", "agent-1", "30s");
            commit(s, "l.txt", "agent\n");
            assertEquals(
                    List.of("exit=0"),
                    push(
                            s,
                            pusher("agent-1"),
                            "-o",
                            "fence=" + l.token(),
                            "-o",
                            proofArg(l),
                            "origin",
                            "HEAD:refs/heads/land"));
            commit(s, "l.txt", "alice, tokenless\n");
            assertEquals(
                    "exit=0",
                    push(s, pusher("alice"), "origin", "HEAD:refs/heads/land").get(0),
                    s.name);
            commit(s, "l.txt", "carol, allowed\n");
            assertEquals(List.of("exit=0"), push(s, pusher("carol"), "origin", "HEAD:refs/heads/land"));

            List<JsonNode> events = audit(s, "git:app:refs/heads/land");
            List<String> seen = new ArrayList<>();
            s.tokenRanks.clear();
            for (JsonNode e : events) {
                String type = e.get("type").asText();
                if (!List.of("accept", "bump", "allow").contains(type)) {
                    continue;
                }
                JsonNode landed = events.stream()
                        .filter(x -> x.get("type").asText().equals("landed")
                                && x.get("newSha")
                                        .asText()
                                        .equals(e.get("newSha").asText()))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError(s.name + ": no landed event for " + e + " in " + events));
                assertEquals(e.get("reason").asText(), landed.get("reason").asText(), s.name + ": " + landed);
                if (s.server != null || !type.equals("bump")) {
                    assertEquals(e.get("token").asLong(), landed.get("token").asLong(), s.name + ": " + landed);
                } else {
                    // The Java hook with its post-receive bumps when the push lands (Landings), from the
                    // counter as it is then: at or past the token its decision named.
                    assertTrue(landed.get("token").asLong() >= e.get("token").asLong(), s.name + ": " + landed);
                }
                assertEquals(
                        e.get("holder").isNull() ? null : e.get("holder").asText(),
                        landed.get("holder").isNull()
                                ? null
                                : landed.get("holder").asText(),
                        s.name + ": " + landed);
                assertEquals(e.get("pusher").asText(), landed.get("pusher").asText(), s.name + ": " + landed);
                seen.add(type + " " + landed.get("reason").asText() + " holder="
                        + landed.get("holder").asText() + " "
                        + normalise(s, "token=" + landed.get("token").asText()));
            }
            landings.put(s.name, seen);
        }
        assertEquals(
                List.of(
                        "bump bumped holder=null token=T1",
                        "accept accepted holder=agent-1 token=T2",
                        "bump bumped holder=null token=T3",
                        "allow allowed holder=null token=0"),
                landings.get("direct-landed"));
        assertEquals(landings.get("direct-landed"), landings.get("shim"), "the curl shim's landings");
        assertEquals(landings.get("direct-landed"), landings.get("client-landed"), "the Java client's landings");
    }

    /** The ledger events of {@code resource} on side {@code s}, oldest first, as {@code fence audit --json} prints them. */
    static List<JsonNode> audit(Side s, String resource) throws IOException {
        Run r = s.server == null
                ? fence(Map.of(), "audit", "--store", s.store, "--resource", resource, "--limit", "0", "--json")
                : fence(
                        Map.of("FENCE_CREDENTIAL", s.server.add("landings-reader-" + s.name, Role.AUDITOR)),
                        "audit",
                        "--server",
                        s.server.url(),
                        "--resource",
                        resource,
                        "--limit",
                        "0",
                        "--json");
        assertEquals(0, r.exit(), s.name + ": " + r.err());
        List<JsonNode> out = new ArrayList<>();
        for (String line : r.out().split("\n")) {
            if (!line.isBlank()) {
                out.add(Json.read(line));
            }
        }
        return out;
    }

    @Test
    void theShimRecordsLandedPushes() {
        var r = shimServer.get("/v1/audit?type=landed&ref=refs/heads/a", shimServer.add("reader", Role.AUDITOR), null);
        assertEquals(200, r.status(), r.body());
        assertTrue(r.body().contains("\"type\":\"landed\""), r.body());
        assertTrue(r.body().isEmpty() || !r.body().contains(ZERO + "\",\"newSha\":\"" + ZERO));
    }
}
