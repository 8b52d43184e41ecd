package dev.fence.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.FencedWrites;
import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Reason;
import dev.fence.migrate.Migrator.Outcome;
import dev.fence.testing.PostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The migration contract on a real PostgreSQL ({@link PostgresServer#shared()}: the machine's server on
 * 127.0.0.1:5432, else a private one), each test in a database of its own.
 */
@Tag("process")
class PostgresMigratorIT extends MigratorContractTest {
    private PostgresServer server;
    private String database;

    @Override
    List<String> refuseTokenUpdates() {
        return List.of(
                "CREATE FUNCTION fence_refuses() RETURNS trigger LANGUAGE plpgsql AS"
                        + " $$ BEGIN RAISE EXCEPTION 'bookkeeping refused by a trigger'; END $$",
                "CREATE TRIGGER fence_refuses BEFORE UPDATE ON fence_tokens FOR EACH ROW"
                        + " EXECUTE FUNCTION fence_refuses()");
    }

    @Override
    String newDatabase() {
        server = PostgresServer.shared();
        database = server.createDatabase();
        return server.url(database);
    }

    @Override
    Connection connect() throws SQLException {
        return server.connect(database);
    }

    @AfterEach
    void dropDatabase() {
        if (database != null) {
            server.dropDatabase(database);
        }
    }

    /**
     * A COMMIT between two identifiers ending in {@code $a$} is a statement of its own to PostgreSQL and its
     * driver: refused as transaction control, before anything runs.
     */
    /**
     * The outside finding: fenced out of db/migrations, an agent re-tied the database to a resource of its own
     * with {@code U&"fence\005Ftokens"}, then migrated under that. The screen refuses the spelling; the same
     * change made with dynamic SQL, which no screen reads, is stopped by the runner and rolled back.
     */
    @Test
    void fencesBookkeepingChangedUnderAnotherSpellingIsRefusedOrRolledBack() throws Exception {
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        migration("0043_sneaky.sql", "UPDATE U&\"fence\\005Ftokens\" SET resource = 'db/sneaky';\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> apply(a, "0043"));
        assertTrue(e.getMessage().contains("fence_tokens"), e.getMessage());
        migration(
                "0043_sneaky.sql",
                "ALTER TABLE invoices ADD COLUMN sneaky INT;\n"
                        + "DO $$ BEGIN EXECUTE 'UPDATE ' || 'fence' || '_tokens SET resource = ''db/sneaky'''; END $$;\n");
        Outcome.Failed f = assertInstanceOf(Outcome.Failed.class, apply(a, "0043"));
        assertTrue(f.message().contains("changed fence's own bookkeeping"), f.message());
        assertTrue(f.rolledBack());
        assertFalse(hasColumn("invoices", "sneaky"));
        assertEquals(a.token(), fenceRow(), "the row still names db/migrations, at A's token");
        assertNull(appliedToken("0043"));
    }

    /**
     * Changes the comparison first missed (an outside review): a deferred constraint trigger that rewrote
     * the fence row at COMMIT, after the check; a case-insensitive collation on the resource column, under
     * which DB/MIGRATIONS would claim db/migrations' row; a CHECK that freezes the row at its token; a
     * role's default search_path moved, after which the next run would look for fence's tables elsewhere.
     */
    @Test
    void changesToFencesTablesThatKeepTheirRowsOrComeAtCommitAreStopped() throws Exception {
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        List<String> sneaky = List.of(
                "CREATE TABLE audit_x (id INT);\n"
                        + "CREATE FUNCTION audit_x_fn() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                        + " EXECUTE 'UPDATE public.fence' || '_tokens SET token = 0'; RETURN NULL; END $$;\n"
                        + "CREATE CONSTRAINT TRIGGER audit_x_t AFTER INSERT ON audit_x DEFERRABLE INITIALLY DEFERRED"
                        + " FOR EACH ROW EXECUTE FUNCTION audit_x_fn();\n"
                        + "INSERT INTO audit_x VALUES (1);\n",
                "CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);\n"
                        + "DO $$ BEGIN EXECUTE 'ALTER TABLE public.fence' || '_tokens ALTER COLUMN resource"
                        + " TYPE varchar(512) COLLATE public.ci'; END $$;\n",
                "DO $$ BEGIN EXECUTE 'ALTER TABLE public.fence' || '_tokens ADD CONSTRAINT frozen CHECK (token < 0"
                        + " OR token >= 0)'; END $$;\n",
                // Names none of fence's tables, and moves where the next run looks for them: a new row at 0.
                "CREATE SCHEMA elsewhere;\n"
                        + "DO $$ BEGIN EXECUTE pg_catalog.format('ALTER ROLE CURRENT_USER IN DATABASE %I SET search_path"
                        + " = elsewhere', pg_catalog.current_database()); END $$;\n");
        for (String sql : sneaky) {
            migration("0043_sneaky.sql", sql);
            Outcome.Failed f = assertInstanceOf(Outcome.Failed.class, apply(a, "0043"), sql);
            assertTrue(f.message().contains("changed fence's own bookkeeping"), f.message());
            assertTrue(f.rolledBack(), sql);
            assertEquals(a.token(), fenceRow(), sql);
            assertNull(appliedToken("0043"), sql);
            assertEquals(a.token(), appliedToken("0041"), sql);
        }
    }

    @Test
    void aCommitBetweenDollarEndedIdentifiersIsRefused() throws Exception {
        Grant a = acquire("agent-A");
        migration(
                "0043_sneaky.sql",
                "CREATE TABLE before_commit (x INTEGER);\n"
                        + "SELECT 1 AS x$a$; COMMIT; CREATE TABLE after_commit (y INTEGER); SELECT 2 AS y$a$;\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> apply(a, null));
        assertTrue(e.getMessage().contains("line 2") && e.getMessage().contains("COMMIT"), e.getMessage());
        assertFalse(hasColumn("before_commit", "x"));
        assertFalse(hasColumn("after_commit", "y"));
        assertFalse(hasColumn("fence_tokens", "token"), "not even the claim");
    }

    /**
     * PostgreSQL's driver ends a -- comment at a lone carriage return, and sends the COMMIT after it as a
     * statement of its own: fence reads the comment so too, and refuses the COMMIT before anything runs.
     */
    @Test
    void aCommitAfterACarriageReturnInACommentIsRefused() throws Exception {
        Grant a = acquire("agent-A");
        migration(
                "0043_sneaky.sql",
                "CREATE TABLE before_commit (x INTEGER);\n-- note\rCOMMIT; SELECT 2\n+ 1;\n"
                        + "CREATE TABLE after_commit (y INTEGER);\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> apply(a, null));
        assertTrue(e.getMessage().contains("line 2: COMMIT"), e.getMessage());
        assertFalse(hasColumn("before_commit", "x"));
        assertFalse(hasColumn("fence_tokens", "token"), "not even the claim");
    }

    /**
     * A migration that turns standard_conforming_strings off would have the driver split a later statement
     * fence read as one ({@code '\'} is a whole string to fence, an open one to the driver then), running a
     * COMMIT fence never screened: refused by name before anything runs, not even the claim.
     */
    @Test
    void aMigrationNamingAQuotingSettingIsRefusedBeforeAnythingRuns() throws Exception {
        Grant a = acquire("agent-A");
        for (String set : List.of(
                "SET standard_conforming_strings = off",
                "SET LOCAL Standard_Conforming_Strings TO off",
                "SELECT pg_catalog.set_config('standard_conforming_strings', 'off', false)",
                "ALTER ROLE CURRENT_USER SET standard_conforming_strings = off",
                "SET backslash_quote = on")) {
            migration(
                    "0043_partial.sql",
                    "CREATE TABLE before_commit (x INTEGER);\n" + set + ";\n"
                            + "SELECT '\\' , ' ; COMMIT ; SELECT 1 --';\nCREATE TABLE after_commit (y INTEGER);\n");
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> apply(a, null), set);
            assertTrue(e.getMessage().contains("line 2: names "), e.getMessage());
            assertFalse(hasColumn("before_commit", "x"), set);
            assertFalse(hasColumn("fence_tokens", "token"), "not even the claim");
        }
    }

    /**
     * A name the screen cannot see (built while the statement runs) still turns the setting off; the run
     * stops right after that statement, before the driver splits anything, and rolls all of it back.
     */
    @Test
    void aQuotingSettingChangedUnseenStopsTheRunBeforeTheNextStatement() throws Exception {
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        Grant b = lapseAndAcquire("agent-B");
        migration(
                "0043_partial.sql",
                "CREATE TABLE before_commit (x INTEGER);\n"
                        + "SELECT pg_catalog.set_config('standard_conforming' || '_strings', 'off', true);\n"
                        + "SELECT '\\' , ' ; COMMIT ; SELECT 1 --';\nCREATE TABLE after_commit (y INTEGER);\n");
        Outcome.Failed f = assertInstanceOf(Outcome.Failed.class, apply(b, null));
        assertEquals(2, f.line());
        assertTrue(f.rolledBack(), f.message());
        assertTrue(f.message().contains("standard_conforming_strings off"), f.message());
        assertFalse(hasColumn("before_commit", "x"));
        assertFalse(hasColumn("after_commit", "y"));
        assertEquals(a.token(), fenceRow());
        assertNull(appliedToken("0043"));
    }

    /** A session that starts with standard_conforming_strings off (the database's setting) runs no migration. */
    @Test
    void aSessionWithoutStandardStringsIsRefused() throws Exception {
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("ALTER DATABASE \"" + database + "\" SET standard_conforming_strings = off");
        }
        Grant a = acquire("agent-A");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> apply(a, null));
        assertTrue(e.getMessage().contains("standard_conforming_strings is off"), e.getMessage());
        assertFalse(hasColumn("invoices", "id"));
        assertEquals(0, fenceRow(), "the claim rolled back");
    }

    /**
     * A statement that ends fence's transaction unseen (here the seam commits, as a COMMIT the driver split
     * out of a statement would): the claim's row lock is gone, a newer token applies meanwhile, and the
     * older run must neither run another statement nor record its version after the newer token wrote.
     */
    @Test
    void aTransactionEndedMidMigrationIsNeverRecordedAfterANewerToken() throws Exception {
        Grant a = acquire("agent-A");
        migration("0043_a.sql", "CREATE TABLE before_end (x INTEGER);\nCREATE TABLE after_end (y INTEGER);\n");
        migration("0044_b.sql", "CREATE TABLE written_by_b (x INTEGER);\n");
        Grant[] newer = new Grant[1];
        Outcome[] bOutcome = new Outcome[1];
        Migrator seamed = new Migrator(writes, new Migrator.Seam() {
            @Override
            public void ran(SqlStatements.Statement statement, Connection connection) throws SQLException {
                if (newer[0] == null) {
                    connection.commit();
                    newer[0] = lapseAndAcquire("agent-B");
                    bOutcome[0] = apply(newer[0], "0044");
                }
            }
        });
        Outcome.Failed f = assertInstanceOf(Outcome.Failed.class, seamed.run(request(a, "0043", false)));
        assertInstanceOf(Outcome.Done.class, bOutcome[0]);
        assertEquals(1, f.line());
        assertFalse(f.rolledBack());
        assertTrue(f.message().contains("ended fence's transaction"), f.message());
        assertNull(appliedToken("0043"), "the older token recorded nothing");
        assertEquals(newer[0].token(), appliedToken("0044"));
        assertEquals(newer[0].token(), fenceRow());
        assertFalse(hasColumn("after_end", "y"), "no statement ran after the transaction ended");
    }

    /**
     * A schema an agent prepared ahead of time (outside any migration) with tables of fence's names, the
     * decoy fence row at 0, as a migration's {@code SET search_path} would find them.
     */
    private void createDecoySchema() throws SQLException {
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA decoy");
            s.execute("CREATE TABLE decoy.fence_tokens (resource VARCHAR(512) PRIMARY KEY, token BIGINT NOT NULL)");
            s.execute("INSERT INTO decoy.fence_tokens (resource, token) VALUES ('" + RESOURCE + "', 0)");
            s.execute("CREATE TABLE decoy.schema_migrations (version VARCHAR(64) PRIMARY KEY, applied_token BIGINT,"
                    + " applied_holder VARCHAR(512))");
        }
    }

    private void assertDecoyUntouched() throws SQLException {
        assertEquals(0, queryLong("SELECT token FROM decoy.fence_tokens WHERE resource = '" + RESOURCE + "'"));
        assertEquals(1, queryLong("SELECT COUNT(*) FROM decoy.fence_tokens"));
        assertEquals(0, queryLong("SELECT COUNT(*) FROM decoy.schema_migrations"));
    }

    /**
     * A migration that switches the session's schema, each way PostgreSQL offers, followed by one that does
     * not: fence's claim and record still go to its own tables in the schema it found on connecting, never
     * to the decoy's tables of the same names, and a token that went stale afterwards is still fenced.
     */
    @Test
    void aSearchPathSwitchDoesNotRedirectFencesBookkeeping() throws Exception {
        createDecoySchema();
        Grant g = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(g, null));
        int version = 43;
        for (String sw : List.of(
                "SET search_path TO decoy",
                "SET LOCAL search_path TO decoy",
                "SELECT pg_catalog.set_config('search_path', 'decoy', false)",
                "set schema 'decoy'")) {
            String switching = String.format("%04d", version);
            String after = String.format("%04d", version + 1);
            migration(switching + "_switch.sql", sw + ";\nCREATE TABLE audit_" + switching + " (id INTEGER);\n");
            migration(after + "_after.sql", "CREATE TABLE public.after_" + after + " (id INTEGER);\n");
            g = lapseAndAcquire("agent-" + switching);
            Outcome.Done done = assertInstanceOf(Outcome.Done.class, apply(g, null), sw);
            assertEquals(
                    List.of(switching + "_switch.sql", after + "_after.sql"),
                    done.applied().stream().map(Migrator.Applied::file).toList(),
                    sw);
            assertEquals(g.token(), fenceRow(), sw);
            assertEquals(g.token(), appliedToken(switching), sw);
            assertEquals(g.token(), appliedToken(after), sw);
            assertTrue(hasColumn("public.after_" + after, "id"), sw);
            assertDecoyUntouched();
            version += 2;
        }
        // The last holder pauses after the lease store admitted it; a successor applies a switching migration.
        Grant stale = g;
        migration("0051_newer.sql", "SET search_path TO decoy;\nCREATE TABLE newer (id INTEGER);\n");
        migration("0052_late.sql", "SET search_path TO decoy;\nCREATE TABLE late (id INTEGER);\n");
        Grant[] newer = new Grant[1];
        Migrator paused = new Migrator(writes, new Migrator.Seam() {
            @Override
            public void admitted(FencedWrites.Attempt attempt) {
                newer[0] = lapseAndAcquire("agent-B");
                assertInstanceOf(Outcome.Done.class, apply(newer[0], "0051"));
            }
        });
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, paused.run(request(stale, "0052", false)));
        assertEquals(Reason.STALE_TOKEN, r.fenced().reason());
        assertEquals(newer[0].token(), r.fenced().current());
        assertEquals(newer[0].token(), fenceRow());
        assertEquals(newer[0].token(), appliedToken("0051"));
        assertNull(appliedToken("0052"));
        assertFalse(hasColumn("decoy.late", "id"), "0052 did not run");
        assertDecoyUntouched();
    }

    /**
     * pg_dump's output starts by emptying the search_path for the session: fence's own statements, which
     * name their schema, still find its tables, in that migration and in the next one of the run.
     */
    @Test
    void aPgDumpStyleEmptySearchPathDoesNotBreakFencesBookkeeping() throws Exception {
        createDecoySchema();
        migration(
                "0043_dump.sql",
                "SELECT pg_catalog.set_config('search_path', '', false);\n"
                        + "CREATE TABLE public.dumped (id integer);\n");
        migration("0044_after.sql", "CREATE TABLE public.after_dump (id integer);\n");
        Grant a = acquire("agent-A");
        Outcome.Done done = assertInstanceOf(Outcome.Done.class, apply(a, null));
        assertEquals(4, done.applied().size(), done.toString());
        assertEquals(a.token(), fenceRow());
        assertEquals(a.token(), appliedToken("0043"));
        assertEquals(a.token(), appliedToken("0044"));
        assertTrue(hasColumn("public.after_dump", "id"));
        assertDecoyUntouched();
    }

    /**
     * An operator in a schema put ahead of pg_catalog on the search_path is chosen over pg_catalog's for
     * fence's unqualified {@code <=}: one that always holds would let a stale token claim the fence row (and
     * lower it). Here a successor claims between two migrations of one run, after the first switched the
     * session's search_path; the next claim must still compare with pg_catalog's operator and fence the run.
     */
    @Test
    void anOperatorOnTheSwitchedSearchPathDoesNotJudgeTheClaim() throws Exception {
        try (Connection c = connect();
                Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA decoy");
            s.execute("CREATE FUNCTION decoy.always(bigint, bigint) RETURNS boolean LANGUAGE sql AS 'SELECT true'");
            s.execute("CREATE OPERATOR decoy.<= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = decoy.always)");
        }
        migration("0043_switch.sql", "SET search_path TO decoy, pg_catalog, public;\n");
        migration("0044_after.sql", "CREATE TABLE public.after_switch (id INTEGER);\n");
        Grant a = acquire("agent-A");
        Migrator overtaken = new Migrator(writes, new Migrator.Seam() {
            @Override
            public void applied(Migrator.Applied applied) {
                if (applied.file().startsWith("0043")) {
                    try (Connection c = connect();
                            Statement s = c.createStatement()) {
                        s.execute("UPDATE public.fence_tokens SET token = token + 100");
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                }
            }
        });
        Outcome.Refused r = assertInstanceOf(Outcome.Refused.class, overtaken.run(request(a, null, false)));
        assertEquals(Reason.STALE_TOKEN, r.fenced().reason());
        assertEquals(a.token() + 100, r.fenced().current());
        assertEquals(
                List.of("0041_create_invoices.sql", "0042_add_invoice_currency.sql", "0043_switch.sql"),
                r.applied().stream().map(Migrator.Applied::file).toList());
        assertEquals(a.token() + 100, fenceRow(), "not lowered");
        assertNull(appliedToken("0044"));
        assertFalse(hasColumn("public.after_switch", "id"), "0044 did not run");
    }

    /**
     * fence's tables live in the schema PostgreSQL names current when fence connects, whatever that schema
     * is called: its name is quoted, an embedded quote doubled.
     */
    @Test
    void fencesTablesLiveInTheSchemaCurrentOnConnectingWhateverItsName() throws Exception {
        server.execute(database, "CREATE SCHEMA \"Odd \"\"name\"");
        server.execute(database, "ALTER DATABASE " + database + " SET search_path TO \"Odd \"\"name\", public");
        migration("0043_switch.sql", "SET search_path TO public;\nCREATE TABLE after_switch (id INTEGER);\n");
        migration("0044_after.sql", "CREATE TABLE public.after_after (id INTEGER);\n");
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        assertEquals(a.token(), queryLong("SELECT token FROM \"Odd \"\"name\".fence_tokens"));
        assertEquals(
                a.token(),
                queryLong("SELECT applied_token FROM \"Odd \"\"name\".schema_migrations" + " WHERE version = '0044'"));
        assertFalse(hasColumn("public.fence_tokens", "token"));
        assertFalse(hasColumn("public.schema_migrations", "version"));
        assertEquals(a.token(), Migrator.status(db, dir, RESOURCE).fenceToken());
    }

    /**
     * With the default search_path ({@code "$user", public}), a migration that creates a schema named after
     * the connecting role changes what {@code current_schema()} names for every later session: fence's tables
     * stay where they were found, or the next run would start a new fence row at 0 and apply every migration
     * again.
     */
    @Test
    void aSchemaNamedAfterTheRoleDoesNotMoveFencesTables() throws Exception {
        String role;
        try (Connection c = connect();
                java.sql.Statement s = c.createStatement();
                java.sql.ResultSet rs = s.executeQuery("SELECT current_user")) {
            rs.next();
            role = rs.getString(1);
        }
        migration("0043_role_schema.sql", "CREATE SCHEMA " + Database.quote(DatabaseUrl.Kind.POSTGRESQL, role) + ";\n");
        Grant a = acquire("agent-A");
        assertInstanceOf(Outcome.Done.class, apply(a, null));
        migration("0044_next.sql", "CREATE TABLE public.next_one (id INTEGER);\n");

        Outcome.Done next = assertInstanceOf(Outcome.Done.class, apply(a, null));
        assertEquals(1, next.applied().size(), next.toString());
        assertEquals(a.token(), queryLong("SELECT token FROM public.fence_tokens"));
        assertEquals(a.token(), Migrator.status(db, dir, RESOURCE).fenceToken());
        assertTrue(Migrator.status(db, dir, RESOURCE).pending().isEmpty());
        assertFalse(hasColumn(Database.quote(DatabaseUrl.Kind.POSTGRESQL, role) + ".fence_tokens", "token"));
    }

    /**
     * A search_path that names no schema that exists (here an empty one, for every session of the database)
     * leaves no schema for fence's tables: refused with a message saying so, before anything is written.
     */
    @Test
    void aSearchPathNamingNoSchemaIsRefusedBeforeAnythingIsWritten() throws Exception {
        server.execute(database, "ALTER DATABASE " + database + " SET search_path = ''");
        Grant a = acquire("agent-A");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> apply(a, null));
        assertTrue(e.getMessage().contains("search_path") && e.getMessage().contains("no schema"), e.getMessage());
        assertFalse(hasColumn("public.fence_tokens", "token"));
        assertFalse(hasColumn("public.schema_migrations", "version"));
        assertFalse(hasColumn("public.invoices", "id"));
        InvalidInputException status =
                assertThrows(InvalidInputException.class, () -> Migrator.status(db, dir, RESOURCE));
        assertTrue(status.getMessage().contains("search_path"), status.getMessage());
    }
}
