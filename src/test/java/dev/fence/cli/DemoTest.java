package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.hook.HookConfig;
import dev.fence.server.CredentialsFile;
import dev.fence.server.HookServer;
import dev.fence.server.Role;
import dev.fence.server.ServerSettings;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.PostgresServer;
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

    /** The migration part, in the seed's order, each outcome checked by the demo and seen here. */
    private static void assertMigrationOutcomes(Result r) {
        assertAllOutcomes(r);
        String out = r.out();
        String[] inOrder = {
            "ok      the dev database has dana's invoices table (0041",
            "ok      agent-A is granted a token on ",
            "ok      agent-B gets a larger token on ",
            "ok      fence migrate status shows agent-B 0042 not applied yet",
            "ok      agent-B's 0042 is applied under its token ",
            "ok      agent-B's push is accepted",
            "ok      agent-A's stale reapply of 0042 is FENCED: reason=stale-token",
            "ok      fence migrate status: the reapply changed nothing",
            "ok      agent-A's stale push is FENCED",
            "ok      its side of the conflict, rebased onto agent-B's tip (a fast-forward), is FENCED:"
                    + " reason=stale-token",
            "ok      applying the renumbered 0043 under the old token is FENCED: reason=stale-token",
            "ok      fence migrate status: 0043 is not applied",
            "ok      fence migrate status: the column exists, 0042 applied by agent-B",
            "ok      agent-B's work is intact on the remote",
        };
        int at = 0;
        for (String step : inOrder) {
            int i = out.indexOf(step, at);
            assertTrue(i >= 0, "'" + step + "' after offset " + at + " in\n" + out);
            at = i + step.length();
        }
        assertTrue(
                out.contains("Next step: re-read the resource (fence migrate status --db "),
                "the migration's FENCED message names its re-read command:\n" + out);
        assertTrue(out.contains("Result: all 29 expected outcomes happened"), out);
        assertTrue(
                out.contains("Ledger timeline (fence audit timeline --resource "),
                "the migrations' ledger is shown:\n" + out);
        assertTrue(
                out.contains("LANDED") && out.contains(": applied 0042_add_invoice_currency.sql to "),
                "the ledger says what landed:\n" + out);
        assertFalse(out.contains("?..?"), "a write outside git shows no object ids:\n" + out);
    }

    /** Server mode: the git part in full, each migration step named and skipped. */
    private static void assertMigrationsSkipped(Result r) {
        assertMigrationsSkipped(r, 18);
    }

    /** As above, with {@code outcomes} expected outcomes (one more with --html: the page is written). */
    private static void assertMigrationsSkipped(Result r, int outcomes) {
        assertAllOutcomes(r);
        assertTrue(r.out().contains("database:  none: the migration steps are skipped in server mode"), r.out());
        for (String step : new String[] {
            "skipped dana's fence migrate apply of 0041_create_invoices.sql",
            "skipped agent-B's fence migrate apply --version 0042: fence migrate has no --server yet",
            "skipped agent-A's fence migrate reapply --version 0042",
            "skipped agent-A's fence migrate apply --version 0043",
            "skipped agent-A's fence migrate status"
        }) {
            assertTrue(r.out().contains(step), step + " in\n" + r.out());
        }
        assertTrue(r.out().contains("Result: all " + outcomes + " expected outcomes happened"), r.out());
        assertTrue(r.out().contains("the migration steps were skipped in server mode"), r.out());
    }

    @Test
    void replaysTheIncidentOnTheEmbeddedSqliteDefault() {
        Result r = demo("--progress", "never");
        assertMigrationOutcomes(r);
        assertTrue(r.out().contains("billing-dev.db (fence migrate, resource "), r.out());
    }

    @Test
    void replaysTheMigrationPartOnPostgresqlWithDb() {
        PostgresServer server;
        try {
            server = PostgresServer.shared();
        } catch (RuntimeException e) {
            abort("no PostgreSQL on 127.0.0.1:5432 and none could be started: " + e.getMessage());
            return;
        }
        String database = server.createDatabase();
        try {
            Result r = demo("--db", server.url(database), "--progress", "never");
            assertMigrationOutcomes(r);
            assertTrue(r.out().contains("database:  " + server.url(database)), r.out());
            // The DDL happened in the named database, as agent-B wrote it, and agent-A's never did.
            assertEquals(
                    "bpchar",
                    server.queryString(
                            database,
                            "SELECT udt_name FROM information_schema.columns"
                                    + " WHERE table_name = 'invoices' AND column_name = 'currency'"));
            assertEquals(
                    "0041,0042",
                    server.queryString(
                            database, "SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_migrations"));

            // Run again on the same database: it is no longer empty, and the demo says so instead of failing
            // its checks one by one.
            Result again = demo("--db", server.url(database), "--progress", "never");
            assertEquals(2, again.exit(), again.out() + again.err());
            assertTrue(again.err().contains("needs a database of its own"), again.err());
        } finally {
            server.dropDatabase(database);
        }
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
            assertMigrationsSkipped(r);
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
        Path page = home.resolve("incident.html");
        Result r = demo("--server", "auto", "--progress", "never", "--html", page.toString());
        assertMigrationsSkipped(r, 19);
        assertTrue(r.out().contains("the incident page is written to " + page), r.out());
        assertTrue(Files.isRegularFile(page), "the page is read from the server's ledger with the auditor credential");
        assertTrue(r.out().contains("in-process fence serve"), r.out());
        assertTrue(r.out().contains("server:    http://127.0.0.1:"), r.out());
    }

    @Test
    void serverModeRefusesConflictingOptions() {
        Result both = demo("--server", "http://127.0.0.1:1", "--store", "sqlite:/x.db", "--progress", "never");
        assertEquals(2, both.exit(), both.err());
        Result stray = demo("--credentials", "/x", "--progress", "never");
        assertEquals(2, stray.exit(), stray.err());
        Result db = demo("--server", "auto", "--db", "sqlite:/x.db", "--progress", "never");
        assertEquals(2, db.exit(), db.err());
        assertTrue(db.err().contains("fence migrate takes --store, not --server"), db.err());
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
            assertMigrationOutcomes(demo("--store", server.url(), "--progress", "never"));
        }
    }
}
