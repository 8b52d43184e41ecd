package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.hook.HookConfig;
import dev.fence.server.CredentialsFile;
import dev.fence.server.HookServer;
import dev.fence.server.Role;
import dev.fence.server.ServerSettings;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's first command, run as CI runs it: it fails the build if any expected outcome is missing. */
@ProcessTest
class DemoTest {
    @TempDir
    Path home;

    private record Result(int exit, String out, String err) {}

    private Result demo(String... extra) {
        return demo(Map.of(), extra);
    }

    private Result demo(Map<String, String> extraEnv, String... extra) {
        Map<String, String> env = new HashMap<>(extraEnv);
        env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("HOME", home.toString());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] args = new String[extra.length + 1];
        args[0] = "demo";
        System.arraycopy(extra, 0, args, 1, extra.length);
        Context ctx = new Context(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out),
                new PrintWriter(err),
                env,
                Clock.systemUTC(),
                home);
        return new Result(Main.run(ctx, args), out.toString(), err.toString());
    }

    private static void assertAllOutcomes(Result r) {
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("Result: all "), r.out());
        assertFalse(r.out().contains("MISSING"), r.out());
        for (String reason :
                new String[] {"superseded", "bad-proof", "stale-token", "token-required", "foreign-overwrite"}) {
            assertTrue(r.out().contains("reason=" + reason), reason + " in\n" + r.out());
        }
        assertTrue(
                r.out().contains("GRANT")
                        && r.out().contains("EXPIRE")
                        && r.out().contains("REJECT"),
                "ends with the timeline");
        assertFalse(r.out().contains("fp2."), "no proof is ever printed");
    }

    @Test
    void replaysTheIncidentOnTheEmbeddedSqliteDefault() {
        assertAllOutcomes(demo("--progress", "never"));
    }

    @Test
    void replaysTheIncidentThroughARunningServerWithShortLivedCredentials() throws Exception {
        Path serverDir = home.resolve("server");
        Files.createDirectories(serverDir);
        Path credentials = serverDir.resolve("credentials");
        Path config = serverDir.resolve("fence.conf");
        Files.writeString(credentials, "");
        Files.writeString(config, dev.fence.demo.Demo.POLICY);
        // An operator's credential that must survive the demo untouched.
        String ops = CredentialsFile.add(credentials, "ops", Role.ADMIN, List.of(), new SecureRandom());
        String reader = CredentialsFile.add(credentials, "reader", Role.AUDITOR, List.of(), new SecureRandom());
        List<String> log = new CopyOnWriteArrayList<>();
        ServerSettings settings = ServerSettings.of(
                new InetSocketAddress("127.0.0.1", 0),
                "sqlite:" + serverDir.resolve("fence.db"),
                credentials,
                HookConfig.load(null, config, null));
        try (HookServer server =
                HookServer.start(settings, u -> Stores.open(u, StoreOptions.defaults()), Clock.systemUTC(), log::add)) {
            Result r = demo(
                    "--server",
                    server.uri().toString(),
                    "--credentials",
                    credentials.toString(),
                    "--progress",
                    "never");
            assertAllOutcomes(r);
            assertTrue(r.out().contains("server:    " + server.uri()), r.out());
            assertTrue(r.out().contains("curl shim"), r.out());
            assertTrue(r.out().contains("fence status tells agent-A it holds no lease"), r.out());
            assertEquals(
                    List.of("ops admin", "reader auditor"),
                    CredentialsFile.describe(credentials),
                    "the demo revokes the credentials it added");

            // Without --credentials, one admin credential from the environment serves every role.
            Result admin = demo(
                    Map.of("FENCE_CREDENTIAL", ops), "--server", server.uri().toString(), "--progress", "never");
            assertAllOutcomes(admin);
            assertTrue(admin.out().contains("one admin credential"), admin.out());
            Result notAdmin = demo(
                    Map.of("FENCE_CREDENTIAL", reader), "--server", server.uri().toString(), "--progress", "never");
            assertEquals(6, notAdmin.exit(), notAdmin.out() + notAdmin.err());
            assertTrue(notAdmin.err().contains("needs an admin credential"), notAdmin.err());
            Result none = demo("--server", server.uri().toString(), "--progress", "never");
            assertEquals(6, none.exit(), none.out() + none.err());
            assertTrue(none.err().contains("--server auto"), none.err());
            assertFalse(String.join("\n", log).contains("fp2."), "no proof reaches the server's log");
        }
    }

    @Test
    void replaysTheIncidentThroughAnInProcessServerWithServerAuto() {
        Result r = demo("--server", "auto", "--progress", "never");
        assertAllOutcomes(r);
        assertTrue(r.out().contains("in-process fence serve"), r.out());
        assertTrue(r.out().contains("server:    http://127.0.0.1:"), r.out());
    }

    @Test
    void serverModeRefusesConflictingOptions() {
        Result both = demo("--server", "http://127.0.0.1:1", "--store", "sqlite:/x.db", "--progress", "never");
        assertEquals(2, both.exit(), both.err());
        Result stray = demo("--credentials", "/x", "--progress", "never");
        assertEquals(2, stray.exit(), stray.err());
        Result down = demo(
                Map.of("FENCE_CREDENTIAL", "ops:" + "x".repeat(43)),
                "--server",
                "http://127.0.0.1:1",
                "--progress",
                "never");
        assertEquals(5, down.exit(), down.err());
    }

    @Test
    void replaysTheIncidentOnRedis() {
        assumeTrue(RedisServer.findExecutable() != null, "no redis-server on the PATH");
        try (RedisServer server = RedisServer.start()) {
            assertAllOutcomes(demo("--store", server.url(), "--progress", "never"));
        }
    }
}
