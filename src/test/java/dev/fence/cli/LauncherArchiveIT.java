package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fence.testing.GitProcess;
import dev.fence.testing.HookedRepo;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import dev.fence.testing.Stdin;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher with the built jar (after {@code package}): {@code --build-archive} makes the class-data
 * archive for this JDK, a hook then starts from it (with {@code -Xshare:on} the JVM refuses to start
 * without it), and an archive older than the jar is left alone rather than refused with a warning a git
 * host would show every pusher.
 */
@ProcessTest
class LauncherArchiveIT {
    @TempDir
    Path tmp;

    record Run(int exit, String out, String err) {}

    private Run launcher(Path bin, Map<String, String> extraEnv, String stdin, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(bin.resolve("fence").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(tmp.toFile());
        pb.environment().clear();
        pb.environment().put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        pb.environment().put("HOME", tmp.toString());
        pb.environment().put("USER", "ci");
        pb.environment()
                .put(
                        "FENCE_JAVA",
                        Path.of(System.getProperty("java.home"), "bin", "java").toString());
        pb.environment().putAll(extraEnv);
        Process p = pb.start();
        Stdin.feed(p, stdin);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "launcher timed out");
        return new Run(p.exitValue(), out, err);
    }

    private static Path archive(Path bin) throws IOException {
        try (Stream<Path> files = Files.list(bin)) {
            return files.filter(f -> {
                        String n = f.getFileName().toString();
                        return n.startsWith("fence-") && (n.endsWith(".jsa") || n.endsWith(".aot"));
                    })
                    .findFirst()
                    .orElse(null);
        }
    }

    /** The launcher and the built jar, side by side in a directory of their own. */
    private Path installFence() throws IOException {
        Path bin = Files.createDirectories(tmp.resolve("opt/fence/bin"));
        Files.copy(Path.of("bin/fence"), bin.resolve("fence"));
        bin.resolve("fence").toFile().setExecutable(true);
        Files.copy(Path.of(System.getProperty("fence.jar")), bin.resolve("fence.jar"));
        return bin;
    }

    private Run hook(Path script, Path gitDir, Map<String, String> extraEnv) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(script.toString()).directory(gitDir.toFile());
        pb.environment().clear();
        pb.environment().put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        pb.environment().put("HOME", tmp.toString());
        pb.environment().put("USER", "ci");
        pb.environment().put("GIT_DIR", ".");
        pb.environment().putAll(extraEnv);
        Process p = pb.start();
        Stdin.feed(p, "");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "hook timed out");
        return new Run(p.exitValue(), out, err);
    }

    @Test
    void anInstalledHookStartsTheJvmItselfWhileTheArchiveIsCurrent() throws Exception {
        Path bin = installFence();
        Path repo = tmp.resolve("app.git");
        Process init = new ProcessBuilder("git", "init", "-q", "--bare", repo.toString()).start();
        assertTrue(init.waitFor(30, TimeUnit.SECONDS) && init.exitValue() == 0);
        Run installed = launcher(
                bin,
                Map.of(),
                "",
                "install",
                "--bare",
                repo.toString(),
                "--store",
                "sqlite:" + tmp.resolve("fence.db"));
        assertEquals(0, installed.exit(), installed.err());
        assertTrue(installed.out().contains("built the class-data archive"), installed.out());
        Path preReceive = repo.resolve("hooks/pre-receive");
        String script = Files.readString(preReceive);
        assertTrue(script.contains("exec \"$java_home/bin/java\""), "a direct start");
        // The archive trained on the store the hook was installed with, which install has built.
        String archiveLine =
                script.lines().filter(l -> l.startsWith("archive=")).findFirst().orElseThrow();
        Path storeArchive = Path.of(archiveLine.substring("archive=".length()));
        assertTrue(storeArchive.getFileName().toString().matches("fence-.+-sqlite\\.(jsa|aot)"), archiveLine);
        assertTrue(Files.isRegularFile(storeArchive), "install built " + storeArchive);

        // With the launcher gone, only a hook that starts the JVM itself still answers.
        Path launcher = bin.resolve("fence");
        Files.move(launcher, bin.resolve("fence.moved"));
        Files.writeString(launcher, "#!/bin/sh\necho 'the launcher ran' >&2\nexit 97\n");
        launcher.toFile().setExecutable(true);
        Run direct = hook(preReceive, repo, Map.of());
        assertEquals(0, direct.exit(), direct.err());
        assertEquals("", direct.err());

        Run opts = hook(preReceive, repo, Map.of("FENCE_JAVA_OPTS", "-Xshare:auto", "FENCE_JAR", "/nowhere.jar"));
        assertEquals(0, opts.exit(), "the pusher's FENCE_JAVA_OPTS or FENCE_JAR moved the start: " + opts.err());
        Files.setLastModifiedTime(storeArchive, FileTime.from(Instant.now().minusSeconds(3600)));
        Run stale = hook(preReceive, repo, Map.of());
        assertEquals(
                97, stale.exit(), "an archive older than the jar leaves the start to the launcher: " + stale.err());
    }

    @Test
    void theHookStartsFromTheArchiveTheLauncherBuiltAndIgnoresAStaleOne() throws Exception {
        Path bin = installFence();

        Run built = launcher(bin, Map.of(), "", "--build-archive");
        assertEquals(0, built.exit(), built.err());
        Path archive = archive(bin);
        assertTrue(archive != null, "no archive next to the jar: " + built.err());
        try (Stream<Path> files = Files.list(bin)) {
            assertEquals(3, files.count(), "the training run leaves nothing else behind");
        }

        String store = "sqlite:" + tmp.resolve("fence.db");
        boolean aot = archive.getFileName().toString().endsWith(".aot");
        // The JVM refuses to start when it cannot use the archive it is told to require, and its class
        // log names where fence's own classes came from.
        Map<String, String> require =
                Map.of("FENCE_JAVA_OPTS", (aot ? "-XX:AOTMode=on" : "-Xshare:on") + " -Xlog:class+load=info:stdout");
        Run hook = launcher(bin, require, "", "hook", "pre-receive", "--store", store);
        assertEquals(0, hook.exit(), hook.err());
        assertEquals("", hook.err());
        assertTrue(hook.out().contains("dev.fence.cli.Main source: shared objects file"), hook.out());
        assertTrue(
                hook.out().contains("dev.fence.hookpath.HookRunner source: shared objects file"),
                "the hook's own classes come from the archive");

        Files.setLastModifiedTime(archive, FileTime.from(Instant.now().minusSeconds(3600)));
        Run stale = launcher(bin, Map.of(), "", "hook", "pre-receive", "--store", store);
        assertEquals(0, stale.exit(), stale.err());
        assertEquals("", stale.err(), "a stale archive must not make the JVM warn");
    }

    /** The JVM flags in effect, as {@code -XX:+PrintFlagsFinal} lists them: name to value. */
    private Map<String, String> flagsOf(Path bin, String... args) throws Exception {
        Run run = launcher(bin, Map.of("FENCE_JAVA_OPTS", "-XX:+PrintFlagsFinal"), "", args);
        assertEquals(0, run.exit(), run.err());
        Map<String, String> flags = new HashMap<>();
        for (String line : run.out().split("\n")) {
            String[] words = line.trim().split("\\s+");
            if (words.length >= 4 && words[2].equals("=")) {
                flags.put(words[1], words[3]);
            }
        }
        assertTrue(flags.containsKey("UseParallelGC"), "no flag listing: " + run.out());
        return flags;
    }

    @Test
    void theServerRunsOnAYoungGenerationOfFixedSizeAndShortCommandsOnTheSerialCollector() throws Exception {
        Path bin = installFence();
        // Left to size itself under load, the parallel collector grew the young generation, and each young
        // pause after a growth first touched new memory: up to 50 ms where a fixed one pauses 3 to 7.
        Map<String, String> serve = flagsOf(bin, "serve", "--help");
        assertEquals("true", serve.get("UseParallelGC"));
        assertEquals("false", serve.get("UseAdaptiveSizePolicy"));
        assertEquals(String.valueOf(512L << 20), serve.get("InitialHeapSize"));
        assertEquals(
                flagsOf(bin, "bench", "--help").get("InitialHeapSize"),
                serve.get("InitialHeapSize"),
                "the bench measures the server as it runs");
        Map<String, String> shortLived = flagsOf(bin, "--version");
        assertEquals("true", shortLived.get("UseSerialGC"));
        assertNotEquals(serve.get("InitialHeapSize"), shortLived.get("InitialHeapSize"), "a hook's heap starts small");
        // An operator's flags come last and win.
        Run sized = launcher(bin, Map.of("FENCE_JAVA_OPTS", "-XX:+PrintFlagsFinal -Xms64m"), "", "serve", "--help");
        assertTrue(
                sized.out()
                        .lines()
                        .anyMatch(l -> l.matches("\\s*size_t InitialHeapSize\\s+= " + (64L << 20) + "\\s.*")),
                sized.out());
    }

    @Test
    void aPushThroughAnInstalledSqliteHookRunsFromItsStoresArchive() throws Exception {
        String log = pushesThroughAnInstalledHook("sqlite:" + tmp.resolve("fence.db"));
        assertTrue(log.contains("dev.fence.store.sqlite.SqliteDb source: shared objects file"), log);
        if (Runtime.version().feature() < 25) {
            // A JVM relocates every page of its archive at start-up, so each class in it costs every push.
            // A SQLite hook of a small push starts no process; the archive's training must not either (it
            // once left a landing pending without a post-receive, and the next hook asked git about it,
            // which put the JDK's process and method-handle machinery, 2 MB of it, into every push).
            List<String> archived = archivedClasses(tmp.resolve("opt/fence/bin"), "sqlite");
            assertTrue(archived.contains("dev.fence.hook.PreReceiveHook"), "no archive listing: " + archived);
            for (String unwanted :
                    List.of("java.lang.ProcessBuilder", "java.lang.invoke.InnerClassLambdaMetafactory")) {
                assertFalse(archived.contains(unwanted), unwanted + " is in the SQLite hook's archive");
            }
            // Installed for SQLite, the hook starts the thread that loads the driver's library (and the store's
            // classes) before it reads its configuration. (A JDK 25 AOT cache loads every class it holds before
            // main: no order to read.)
            int preload = log.indexOf("dev.fence.store.Stores$SqlitePreload ");
            int config = log.indexOf("dev.fence.hook.HookConfig ");
            assertTrue(
                    preload >= 0 && config >= 0 && preload < config, "the library was loaded after the configuration");
        }
    }

    @Test
    void aPushThroughAnInstalledRedisHookRunsFromItsStoresArchive() throws Exception {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (RedisServer redis = RedisServer.start()) {
            String log = pushesThroughAnInstalledHook(redis.url());
            assertTrue(log.contains("dev.fence.store.redis.RedisLeaseStore source: shared objects file"), log);
            if (Runtime.version().feature() < 25) {
                // Installed for Redis, the hook starts setting up its socket classes before it reads its
                // configuration, from the archive (whose training ran that preload too).
                int preload = log.indexOf("dev.fence.store.redis.RedisConnections$Preload source: shared objects file");
                int config = log.indexOf("dev.fence.hook.HookConfig ");
                assertTrue(
                        preload >= 0 && config >= 0 && preload < config,
                        "the socket classes were set up after the configuration was read");
            }
        }
    }

    @Test
    void anInstalledHookWhoseStoreOrServerFailsRefusesThePushWithAReason() throws Exception {
        // The failure paths of a hook started from its store's archive load what the archive's training did
        // not (the driver's exceptions, the HTTP client): they must still say what went wrong.
        Path db = tmp.resolve("fence.db");
        Installed it = install("sqlite:" + db);
        Path repo = it.repo();
        Path work = it.work();
        Map<String, String> gitEnv = it.gitEnv();
        JsonNode lease = acquire(it.bin(), "sqlite:" + db, "agent-a");

        Files.writeString(db, "not a database, whatever the file is called\n");
        GitProcess.Result broken = commitAndPush(work, gitEnv, repo, lease, "one");
        assertNotEquals(0, broken.exit(), "a push was admitted without its store");
        assertTrue(broken.stderr().contains("reason=store-down"), broken.stderr());
        assertFalse(broken.stderr().contains("Exception in thread"), broken.stderr());

        int closed;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        Files.writeString(repo.resolve("fence.conf"), "server = http://127.0.0.1:" + closed + "\n");
        Map<String, String> withCredential = new java.util.HashMap<>(gitEnv);
        withCredential.put("FENCE_CREDENTIAL", "githost:" + "s".repeat(43));
        GitProcess.Result unreachable = commitAndPush(work, withCredential, repo, lease, "two");
        assertNotEquals(0, unreachable.exit(), "a push was admitted without its server");
        assertTrue(unreachable.stderr().contains("could not be reached"), unreachable.stderr());
        assertFalse(unreachable.stderr().contains("Exception in thread"), unreachable.stderr());
    }

    /**
     * Installs the hook with the real launcher and jar for {@code store} (which builds that store's archive),
     * then pushes as agent A, as agent B after A released its lease, and as A again with its old token; the
     * first two are admitted, the last is FENCED. Returns the class log of the first push's hook JVM, having
     * checked that the JVM started from the archive and that neither it nor the JVM of the refused push
     * links a lambda the bench would pay for ({@link #assertNoLambdaCost}).
     */
    private String pushesThroughAnInstalledHook(String store) throws Exception {
        Installed it = install(store);
        Path bin = it.bin();
        Path repo = it.repo();
        Path work = it.work();
        Map<String, String> gitEnv = it.gitEnv();
        String script = Files.readString(repo.resolve("hooks/pre-receive"));
        assertTrue(script.contains("exec \"$java_home/bin/java\""), "a direct start: " + script);

        String postScript = Files.readString(repo.resolve("hooks/post-receive"));
        assertTrue(postScript.contains("  \"$java_home/bin/java\""), "post-receive starts directly too: " + postScript);

        JsonNode a = acquire(bin, store, "agent-a");
        Path logs = Files.createDirectories(tmp.resolve("class-logs"));
        HookedRepo.jvmOptions(
                repo.resolve("hooks/post-receive"), "-Xlog:class+load=info:file=" + logs.resolve("post.log"));
        GitProcess.Result first =
                commitAndPush(work, withClassLog(repo, gitEnv, logs.resolve("classes.log")), repo, a, "one");
        assertEquals(0, first.exit(), first.stderr());
        String log = Files.readString(logs.resolve("classes.log"));

        Run released = launcher(
                bin,
                Map.of("FENCE_PROOF", a.get("proof").asText()),
                "",
                "lease",
                "release",
                "--resource",
                "git:app:refs/heads/main",
                "--holder",
                "agent-a",
                "--token",
                a.get("token").asText(),
                "--store",
                store);
        assertEquals(0, released.exit(), released.err());
        JsonNode b = acquire(bin, store, "agent-b");
        assertEquals(0, commitAndPush(work, gitEnv, repo, b, "two").exit());
        GitProcess.Result late =
                commitAndPush(work, withClassLog(repo, gitEnv, logs.resolve("fenced.log")), repo, a, "three");
        assertNotEquals(0, late.exit(), "A's push with its superseded token was admitted");
        assertTrue(late.stderr().contains("FENCED"), late.stderr());
        String fencedLog = Files.readString(logs.resolve("fenced.log"));

        assertTrue(log.contains("dev.fence.cli.Main source: shared objects file"), "the archive was used: " + log);
        assertTrue(log.contains("dev.fence.hook.PreReceiveHook source: shared objects file"), log);
        // All of fence's own classes: the installed hook defers its landings to post-receive (the default of
        // fence install --bare), whose classes the training must therefore have loaded too.
        assertEquals(List.of(), fromTheJar(log), "classes of the hook's path missing from its archive");
        // post-receive runs on every push where fence records landings: it starts from the archive as well.
        String postLog = Files.readString(logs.resolve("post.log"));
        assertTrue(postLog.contains("dev.fence.hook.PostReceiveHook source: shared objects file"), postLog);
        assertEquals(List.of(), fromTheJar(postLog), "classes of post-receive's path missing from the archive");
        assertNoLambdaCost(postLog, "the post-receive that recorded a landed push", store);
        assertNoLambdaCost(log, "the hook that admitted a push", store);
        assertNoLambdaCost(fencedLog, "the hook that refused a push", store);
        return log;
    }

    /**
     * The one check of the rule that the hook path links no lambda, in place of a comment at every site
     * (fence's code, the drivers' and the JDK's own): what the "Java hook" rows of {@code fence bench} need
     * of a hook's class log. On every JDK no class is generated at run time: each lambda class and lambda
     * form a hook loads comes from its archive (spinning one costs milliseconds). Below JDK 25 no lambda is
     * linked at all: a JDK 17 archive can hold a lambda's class, but linking the process's first lambda
     * still starts {@code java.lang.invoke} and spins {@code LambdaForm$MH} classes at run time (about 5 ms
     * of a push measured here, a third of the budget over the JVM's own start-up; a lambda added to the
     * hook's store opener fails the generated-class check above on JDK 17); a JDK 25 AOT cache holds
     * lambdas already linked, so there any lambda of the hook's path is free as long as the training run
     * went through it.
     */
    private static void assertNoLambdaCost(String log, String who, String store) {
        if (Runtime.version().feature() < 25 && store.startsWith("redis")) {
            // A Redis hook's java.net.Socket links lambdas of the JDK's own socket classes on JDK 17 (the price
            // of using no JDK internals; the bench allows that hook floor + 20 ms); fence's code and Jedis's on
            // the hook's path link none.
            assertEquals(List.of(), lambdasOfOurs(log), who + " linked a lambda");
            // Those lambdas come from the archive: the store thread's connection waits for the preload thread
            // that links them, as two threads linking one call site at once left the second spinning its class.
            assertEquals(
                    List.of(),
                    log.lines()
                            .filter(l -> l.contains("$$Lambda") && !l.contains("source: shared objects file"))
                            .toList(),
                    who + " generated a lambda class at run time");
            return;
        }
        List<String> generated = log.lines()
                .filter(l -> l.contains("$$Lambda") || l.contains("LambdaForm$") || l.contains("$Proxy"))
                .filter(l -> !l.contains("source: shared objects file"))
                .toList();
        assertEquals(List.of(), generated, who + " generated classes at run time");
        if (Runtime.version().feature() < 25) {
            assertFalse(log.contains("java.lang.invoke.LambdaMetafactory "), who + " linked a lambda: " + log);
        }
    }

    /** The classes of the JDK 17 archive that {@code fence install} built in {@code bin} for {@code store}. */
    private static List<String> archivedClasses(Path bin, String store) throws Exception {
        Path jar = bin.resolve("fence.jar");
        Path archive;
        try (Stream<Path> files = Files.list(bin)) {
            archive = files.filter(f -> f.getFileName().toString().endsWith("-" + store + ".jsa"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no " + store + " archive in " + bin));
        }
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-XX:+UseSerialGC",
                        "-XX:SharedArchiveFile=" + archive,
                        "-XX:+PrintSharedArchiveAndExit",
                        "-XX:+PrintSharedDictionary",
                        "-cp",
                        jar.toString())
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "listing the archive timed out");
        List<String> classes = new ArrayList<>();
        // "   12: java.lang.String boot_loader"
        Matcher m = Pattern.compile("(?m)^\\s*\\d+: (\\S+) ").matcher(out);
        while (m.find()) {
            classes.add(m.group(1));
        }
        return classes;
    }

    /** The lines of a class log that load one of fence's classes from the jar, not from the archive. */
    private static List<String> fromTheJar(String log) {
        return log.lines()
                .filter(l -> l.contains(" dev.fence.") && l.contains("source: file:"))
                .toList();
    }

    /** The lambda classes of fence and of Jedis that a class log shows loaded. */
    private static List<String> lambdasOfOurs(String log) {
        List<String> found = new ArrayList<>();
        Matcher m = Pattern.compile("\\] ((?:dev\\.fence|redis\\.clients)\\.\\S*\\$\\$Lambda\\S*)")
                .matcher(log);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }

    /** The launcher and jar, a bare repository with the hook they installed for a store, and a work tree. */
    private record Installed(Path bin, Path repo, Path work, Map<String, String> gitEnv) {}

    private Installed install(String store) throws Exception {
        Path bin = installFence();
        Path repo = tmp.resolve("app.git");
        Map<String, String> gitEnv = GitProcess.cleanEnv(tmp);
        GitProcess.run(tmp, gitEnv, "init", "-q", "--bare", "-b", "main", repo.toString());
        Run installed = launcher(bin, Map.of(), "", "install", "--bare", repo.toString(), "--store", store);
        assertEquals(0, installed.exit(), installed.err());
        Path work = tmp.resolve("work");
        GitProcess.run(tmp, gitEnv, "init", "-q", "-b", "main", work.toString());
        return new Installed(bin, repo, work, gitEnv);
    }

    /**
     * {@code env}, with the JVM of {@code repo}'s hook writing its class log to {@code log}. The installed hook
     * unsets {@code JAVA_TOOL_OPTIONS} (a pusher's environment must not choose the JVM's options), so the
     * test writes it into the script, after that line, as only the hook's owner could.
     */
    private static Map<String, String> withClassLog(Path repo, Map<String, String> env, Path log) {
        HookedRepo.jvmOptions(repo.resolve("hooks/pre-receive"), "-Xlog:class+load=info:file=" + log);
        return env;
    }

    private JsonNode acquire(Path bin, String store, String holder) throws Exception {
        Run r = launcher(
                bin,
                Map.of(),
                "",
                "lease",
                "acquire",
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                holder,
                "--store",
                store,
                "--json");
        assertEquals(0, r.exit(), r.err());
        return new ObjectMapper().readTree(r.out());
    }

    private static GitProcess.Result commitAndPush(
            Path work, Map<String, String> env, Path repo, JsonNode lease, String message) throws IOException {
        GitProcess.run(work, env, "commit", "-q", "--allow-empty", "-m", message);
        return GitProcess.runAllowingFailure(
                work,
                env,
                "push",
                "-q",
                "-o",
                "fence=" + lease.get("token").asText(),
                "-o",
                "fence-proof=" + lease.get("proof").asText(),
                repo.toString(),
                "HEAD:main");
    }
}
