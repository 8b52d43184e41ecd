package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence doctor --repo} on a bare repository that the built jar installed fence into (through the
 * launcher, as an admin does): every finding ok, then each of the failures an admin meets — push options
 * off, a hook file edited, the store's SQLite file and the hook's fence.conf not writable or readable by
 * the user the hooks run as, a Redis that evicts keys and persists nothing — named as a failure or warning
 * with its fix, in the JSON and the exit status.
 */
@ProcessTest
class DoctorRepoTest {
    @TempDir
    Path tmp;

    Path launcher;
    Path repo;
    Path db;

    private Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("HOME", tmp.toString());
        env.put("USER", System.getProperty("user.name"));
        return env;
    }

    private String run(String... command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env());
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), String.join(" ", command));
        assertEquals(0, p.exitValue(), String.join(" ", command) + ":\n" + out);
        return out;
    }

    private DoctorCommandTest.Result doctor(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        Context ctx = new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out),
                new PrintWriter(err),
                env(),
                Clock.systemUTC(),
                tmp);
        List<String> all = new ArrayList<>(List.of("doctor", "--repo", repo.toString(), "--json"));
        all.addAll(List.of(args));
        return new DoctorCommandTest.Result(Main.run(ctx, all.toArray(String[]::new)), out.toString(), err.toString());
    }

    private void install() throws Exception {
        run(launcher.toString(), "install", "--bare", repo.toString(), "--store", "sqlite:" + db);
    }

    @BeforeEach
    void installFence() throws Exception {
        Path bin = Files.createDirectories(tmp.resolve("opt/fence/bin"));
        Files.copy(Path.of("bin/fence"), bin.resolve("fence"));
        bin.resolve("fence").toFile().setExecutable(true);
        Files.copy(Path.of(System.getProperty("fence.jar", "target/fence.jar")), bin.resolve("fence.jar"));
        launcher = bin.resolve("fence");
        repo = tmp.resolve("srv/app.git");
        db = Files.createDirectories(tmp.resolve("var/fence")).resolve("fence.db");
        run("git", "init", "-q", "--bare", repo.toString());
        install();
        // The store's file, made by a fence call as the installer's user.
        run(launcher.toString(), "lease", "acquire", "--store", "sqlite:" + db, "--resource", "r", "--holder", "h");
    }

    /**
     * A hook file others may write is a fence anyone on the host can take down (one 'exit 0' line): byte
     * for byte intact today says nothing about tomorrow, so it is a failure with the chmod that fixes it.
     */
    @Test
    void aHookFileThatOthersMayWriteIsAFailureThoughItIsIntact() throws Exception {
        Path hook = repo.resolve("hooks/pre-receive");
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxrwxrwx"));
        DoctorCommandTest.Result open = doctor();
        assertEquals("fail", open.status("hook.pre-receive"), open.out());
        assertTrue(open.detail("hook.pre-receive").contains("writable by others"), open.out());
        assertTrue(open.finding("hook.pre-receive").get("fix").asText().contains("chmod go-w " + hook), open.out());
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertEquals("ok", doctor().status("hook.pre-receive"));
    }

    @Test
    void anInstallByTheJarIsHealthyAndEachBreakageIsNamedWithItsFix() throws Exception {
        DoctorCommandTest.Result healthy = doctor();
        assertEquals(0, healthy.exit(), healthy.out() + healthy.err());
        for (String check : List.of(
                "hook.user",
                "git.push-options",
                "hook.pre-receive",
                "hook.post-receive",
                "hook.archive",
                "hook.config",
                "sqlite.file",
                "store.reachable",
                "store.writable")) {
            assertEquals("ok", healthy.status(check), check + ": " + healthy.out());
        }
        assertTrue(healthy.detail("hook.pre-receive").contains("intact"), healthy.out());
        assertTrue(healthy.detail("hook.archive").contains("is current for JDK"), healthy.out());

        // Push options off: no push could carry a token.
        run("git", "--git-dir=" + repo, "config", "receive.advertisePushOptions", "false");
        DoctorCommandTest.Result off = doctor();
        assertEquals(ExitCode.CONFIG.code(), off.exit(), off.out());
        assertEquals("fail", off.status("git.push-options"));
        assertTrue(off.finding("git.push-options").get("fix").asText().contains("receive.advertisePushOptions true"));
        run("git", "--git-dir=" + repo, "config", "--unset", "receive.advertisePushOptions");
        assertTrue(doctor().detail("git.push-options").contains("set in neither"), "unset is named too");

        // An edit that keeps fence's command line but lets every push through first.
        Path hook = repo.resolve("hooks/pre-receive");
        String original = Files.readString(hook);
        Files.writeString(hook, original.replace("# installed by fence\n", "# installed by fence\nexit 0\n"));
        DoctorCommandTest.Result edited = doctor();
        assertEquals("fail", edited.status("hook.pre-receive"), edited.out());
        assertTrue(edited.detail("hook.pre-receive").contains("first at line 3: 'exit 0'"), edited.out());
        assertTrue(edited.finding("hook.pre-receive").get("fix").asText().startsWith("rerun fence install --bare"));
        // An edit of the command line itself.
        Files.writeString(hook, original.replaceAll("(?m)^exec .*$", "exec true"));
        assertEquals("fail", doctor().status("hook.pre-receive"));
        // The fix the findings give: rerun the install.
        install();
        DoctorCommandTest.Result fixed = doctor();
        assertEquals(0, fixed.exit(), fixed.out());
        assertEquals("ok", fixed.status("hook.pre-receive"));
        assertEquals("ok", fixed.status("git.push-options"));
    }

    @Test
    void aStoreTheHooksUserCannotWriteFailsEvenWhenTheCheckCanWriteIt() throws Exception {
        boolean root = System.getProperty("user.name").equals("root");
        if (root) {
            // The hooks run as the repository's owner; the store's file and fence.conf stay root's (both mode
            // 600), as when an admin ran fence as root. Root may write them, the hooks may not.
            UserPrincipal nobody =
                    tmp.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
            Files.setOwner(repo, nobody);
            DoctorCommandTest.Result r = doctor();
            assertEquals(ExitCode.CONFIG.code(), r.exit(), r.out());
            assertTrue(r.detail("hook.user").contains("the hooks run as nobody (the owner of " + repo), r.out());
            JsonNode file = r.finding("sqlite.file");
            assertEquals("fail", file.get("status").asText(), r.out());
            assertTrue(
                    file.get("detail").asText().contains("not writable by nobody (the hooks' user): " + db), r.out());
            assertTrue(file.get("detail").asText().contains("owned by root, mode rw-------"), r.out());
            assertTrue(file.get("fix").asText().startsWith("chown nobody " + db), r.out());
            JsonNode config = r.finding("hook.config");
            assertEquals("fail", config.get("status").asText(), r.out());
            assertTrue(config.get("detail").asText().contains("nobody cannot read " + repo.resolve("fence.conf")));
            // The real write went through, as root: it says whom it was made as.
            assertTrue(r.detail("store.writable").contains("as root (the hooks run as nobody)"), r.out());

            // Named explicitly, the hooks' user is judged instead of the owner.
            DoctorCommandTest.Result asRoot = doctor("--hook-user", "root");
            assertEquals(0, asRoot.exit(), asRoot.out());
            assertEquals("ok", asRoot.status("sqlite.file"));
        } else {
            Files.setPosixFilePermissions(db, PosixFilePermissions.fromString("r--r--r--"));
            DoctorCommandTest.Result r = doctor();
            assertEquals(ExitCode.CONFIG.code(), r.exit(), r.out());
            assertEquals("fail", r.status("sqlite.file"), r.out());
            assertTrue(r.detail("sqlite.file").contains("not writable"), r.out());
        }
    }

    @Test
    void aCurlShimIsComparedWithTheShimAndItsSettingsFileJudgedForTheHooksUser() throws Exception {
        Path shimRepo = tmp.resolve("srv/shim.git");
        run("git", "init", "-q", "--bare", shimRepo.toString());
        run(
                launcher.toString(),
                "install",
                "--bare",
                shimRepo.toString(),
                "--shim",
                "curl",
                "--server",
                "http://127.0.0.1:8700");
        repo = shimRepo;
        DoctorCommandTest.Result r = doctor();
        assertEquals(0, r.exit(), r.out());
        assertEquals("ok", r.status("hook.pre-receive"), r.out());
        assertTrue(r.detail("hook.config").contains("fence-shim.conf"), r.out());
        assertTrue(r.detail("hook.archive").contains("no JVM"), r.out());
        Path conf = shimRepo.resolve("hooks/fence-shim.conf");
        Files.writeString(shimRepo.resolve("hooks/pre-receive"), "\n", java.nio.file.StandardOpenOption.APPEND);
        assertEquals("fail", doctor().status("hook.pre-receive"), "one byte added to the shim");
        if (System.getProperty("user.name").equals("root")) {
            Files.setOwner(
                    shimRepo,
                    tmp.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
            DoctorCommandTest.Result unreadable = doctor();
            assertEquals("fail", unreadable.status("hook.config"), unreadable.out());
            assertTrue(unreadable.detail("hook.config").contains("nobody cannot read " + conf), unreadable.out());
        }
    }

    @Test
    void theHooksRedisIsJudgedFromTheRepositorysConfiguration() throws Exception {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (RedisServer redis = RedisServer.start("--appendonly", "no", "--maxmemory-policy", "allkeys-lru")) {
            Files.writeString(repo.resolve("fence.conf"), "# installed by fence\nstore = " + redis.url() + "\n");
            DoctorCommandTest.Result r = doctor();
            assertEquals(ExitCode.CONFIG.code(), r.exit(), r.out() + r.err());
            assertEquals("fail", r.status("redis.eviction"), r.out());
            assertTrue(r.detail("redis.eviction").contains("allkeys-lru"), r.out());
            assertTrue(r.finding("redis.eviction").get("fix").asText().contains("noeviction"), r.out());
            assertEquals("warn", r.status("redis.persistence"), r.out());
            assertTrue(r.detail("redis.persistence").contains("appendonly no"), r.out());
            assertFalse(Json.read(r.out().strip()).get("ok").asBoolean());
        }
    }
}
