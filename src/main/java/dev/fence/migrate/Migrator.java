package dev.fence.migrate;

import dev.fence.core.Fenced;
import dev.fence.core.FencedWrites;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Names;
import dev.fence.core.Printable;
import dev.fence.core.Reason;
import dev.fence.core.StoreUnavailableException;
import java.nio.file.Path;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Applies migrations under a lease token: {@code fence migrate apply|reapply|status} as a library, for
 * commands, the demo and harnesses alike.
 *
 * <p>Every change is fenced twice. First the lease store judges the token by the hook's rule ({@link
 * FencedWrites#admit}): a valid proof, the latest token granted, not released. Then the database judges it
 * itself, so that a holder whose lease lapsed between the two checks (a pause, a compaction) is still
 * stopped: the resource's row in {@code fence_tokens} is claimed with {@code UPDATE … SET token = :token
 * WHERE token <= :token}, and zero rows claimed means a newer token has written (FENCED, rolled back,
 * nothing applied).
 *
 * <ul>
 *   <li>PostgreSQL and SQLite: the claim, the migration's statements and its {@code schema_migrations} row
 *       (with {@code applied_token}) are one transaction; a failure anywhere rolls all of it back, the fence
 *       row included.
 *   <li>MariaDB/MySQL, whose DDL commits by itself: the claim is a transaction of its own, made just before
 *       the migration, and runners of one resource are serialised by a named lock ({@code GET_LOCK}). What
 *       is left open: a runner that dies (or fails) between the claim and its record leaves the DDL it ran
 *       applied and unrecorded, and writers that bypass {@code fence migrate} take no lock.
 * </ul>
 *
 * <p>A database is fenced by one resource: the first run seeds its row in {@code fence_tokens}, and a run
 * naming another resource is refused (invalid input, nothing written), so that an agent fenced on one
 * resource cannot take a lease on another and migrate the same schema.
 *
 * <p>Apply applies each pending version (or the one asked for) in version order, one transaction each,
 * stopping at the first refusal or failure; a version already applied is left alone. Reapply runs one
 * version's file again and is legal only for a version applied under the caller's own token by the caller's
 * holder (of the database's one resource). A new version
 * (a renumbered file) needs a current token like any change.
 *
 * <p>{@code schema_migrations}: one fence creates ({@code version} as text), or an existing one with a
 * {@code version} column (Rails-style), which fence adopts by adding two nullable columns ({@code
 * applied_token}, {@code applied_holder}) that its owner's inserts leave empty. A database managed by
 * Flyway ({@code flyway_schema_history}) is refused: fence does not write Flyway's history.
 *
 * <p>fence's tables live where the connection to the database is when fence opens it, before any
 * migration runs: PostgreSQL's {@code current_schema()} (a search_path that names no existing schema is
 * refused: invalid input, nothing written), MariaDB's database. Every statement of fence's names them
 * there, and on PostgreSQL names pg_catalog's operators too, so a migration may switch the session's schema
 * for its own statements ({@code SET search_path}, pg_dump's {@code set_config('search_path', '', false)},
 * {@code USE}) without moving the claim or the record to tables of the same names elsewhere, or having an
 * operator of its own judge the claim.
 *
 * <p>Not thread-safe; one run per instance at a time.
 */
public final class Migrator {
    /** How long a MariaDB runner waits for another runner of the same resource, in seconds. */
    static final int LOCK_WAIT_SECONDS = 30;

    /** The resource migrations are fenced by unless told otherwise. */
    public static final String DEFAULT_RESOURCE = "db/migrations";

    private final FencedWrites writes;
    private final Seam seam;

    /** Points in a run where a test may step in; the real runner has none. */
    public interface Seam {
        /** After the lease store admitted the run, before the database is asked to claim. */
        default void admitted(FencedWrites.Attempt attempt) {}

        /** After a migration's statement ran without error, on the migration's own connection. */
        default void ran(SqlStatements.Statement statement, java.sql.Connection connection) throws SQLException {}

        /** After a migration was applied and recorded, before the next one's claim. */
        default void applied(Applied applied) {}
    }

    private static final Seam NONE = new Seam() {};

    public Migrator(FencedWrites writes) {
        this(writes, NONE);
    }

    public Migrator(FencedWrites writes, Seam seam) {
        this.writes = writes;
        this.seam = seam;
    }

    /**
     * A run of {@code apply} or {@code reapply}.
     *
     * @param db the database
     * @param dir the migrations directory
     * @param version the one version to apply (digits), or null for every pending one; required to reapply
     * @param reapply true to run an applied version's file again
     * @param resource the fenced resource ({@link #DEFAULT_RESOURCE} when null)
     * @param proof the grant's proof, or null (then FENCED: a token number alone is not a credential)
     * @param dirLabel the directory as the user named it, for the re-read command
     */
    public record Request(
            DatabaseUrl db,
            Path dir,
            String version,
            boolean reapply,
            String resource,
            String holder,
            long token,
            String proof,
            String dirLabel) {
        public Request {
            resource = resource == null ? DEFAULT_RESOURCE : Names.require("resource", resource);
            dirLabel = dirLabel == null ? dir.toString() : dirLabel;
        }

        @Override
        public String toString() {
            return "Request[db=" + db + ", dir=" + dir + ", version=" + version + ", reapply=" + reapply + ", resource="
                    + resource + ", holder=" + holder + ", token=" + token + ", proof=(hidden)]";
        }
    }

    /** A migration this run applied. */
    public record Applied(String file, long version, long token, boolean reapplied) {}

    /** A migration this run found applied already and left alone. */
    public record Skipped(String file, Long appliedToken, String appliedHolder) {}

    /** What a run did. Exit codes: {@code Done} 0, {@code Refused} 3, {@code Failed} 1. */
    public sealed interface Outcome {
        /** What was applied before the run ended. */
        List<Applied> applied();

        /** Every migration asked for is applied. */
        record Done(List<Applied> applied, List<Skipped> skipped) implements Outcome {}

        /**
         * FENCED: the lease store or the database refused the token; this migration was rolled back.
         *
         * @param reread the command that re-reads the resource, for the FENCED message
         */
        record Refused(List<Applied> applied, Fenced fenced, String reread) implements Outcome {}

        /**
         * The database refused a statement of {@code file}.
         *
         * @param line the line of the file the statement starts on
         * @param rolledBack true when the whole migration and the claim rolled back (transactional DDL);
         *     false on MariaDB/MySQL, where the statements before it stay applied
         */
        record Failed(List<Applied> applied, String file, int line, String message, boolean rolledBack)
                implements Outcome {}
    }

    /**
     * Runs {@code r}.
     *
     * @throws InvalidInputException for a missing directory or file, a bad version, an unreadable file, a
     *     reapply of a version that is not applied, or a database fence cannot adopt; nothing was written
     *     to the database
     * @throws StoreUnavailableException when the lease store or the database cannot be reached
     */
    public Outcome run(Request r) {
        List<MigrationFile> files = MigrationFile.scan(r.dir());
        List<MigrationFile> asked;
        if (r.version() != null) {
            long v = MigrationFile.parseVersion(r.version());
            asked = files.stream().filter(f -> f.version() == v).toList();
            if (asked.isEmpty()) {
                throw new InvalidInputException("no migration file for version " + r.version() + " in " + r.dir()
                        + " (expected a file named " + r.version() + "_<name>.sql)");
            }
        } else if (r.reapply()) {
            throw new InvalidInputException("reapply needs --version: it runs one applied version again");
        } else {
            asked = files;
        }
        // Every file is read and split before anything is written: bad input leaves everything as it was.
        Map<MigrationFile, List<SqlStatements.Statement>> scripts = new LinkedHashMap<>();
        for (MigrationFile f : asked) {
            try {
                scripts.put(f, f.statements(r.db().kind()));
            } catch (InvalidInputException e) {
                throw new InvalidInputException(
                        e.getMessage().startsWith("line ") ? f.file() + " " + e.getMessage() : e.getMessage());
            }
        }
        String reread = "fence migrate status --db " + Printable.shellWord(r.db().describe()) + " --dir "
                + Printable.shellWord(r.dirLabel());
        String what = (r.reapply() ? "reapply " : "apply ")
                + (r.version() != null ? asked.get(0).fileName() : "pending migrations of " + r.dirLabel());
        FencedWrites.Attempt attempt = new FencedWrites.Attempt(r.resource(), r.holder(), r.token(), r.proof(), what);
        if (writes.admit(attempt) instanceof FencedWrites.Decision.Refused refused) {
            return new Outcome.Refused(List.of(), refused.fenced(), reread);
        }
        seam.admitted(attempt);
        List<Applied> applied = new ArrayList<>();
        List<Skipped> skipped = new ArrayList<>();
        try (Database db = Database.open(r.db())) {
            Schema schema = prepare(db, r.resource());
            for (Map.Entry<MigrationFile, List<SqlStatements.Statement>> e : scripts.entrySet()) {
                Step step = r.db().kind().transactionalDdl()
                        ? inTransaction(db, schema, r, e.getKey(), e.getValue())
                        : claimFirst(db, schema, r, e.getKey(), e.getValue());
                if (step instanceof Step.Fence f) {
                    writes.refusedByTarget(attempt, f.fenced());
                    return new Outcome.Refused(List.copyOf(applied), f.fenced(), reread);
                } else if (step instanceof Step.Fail f) {
                    return new Outcome.Failed(
                            List.copyOf(applied), e.getKey().fileName(), f.line(), f.message(), f.rolledBack());
                } else if (step instanceof Step.Skip s) {
                    skipped.add(s.skipped());
                } else {
                    Applied a = ((Step.Apply) step).applied();
                    applied.add(a);
                    seam.applied(a);
                    writes.landed(
                            attempt,
                            (a.reapplied() ? "reapplied " : "applied ") + a.file() + " to " + r.db().describe());
                }
            }
        } catch (SQLException e) {
            throw Database.failure(r.db(), e);
        }
        return new Outcome.Done(List.copyOf(applied), List.copyOf(skipped));
    }

    /**
     * The state of {@code db} against the files of {@code dir}, read without changing anything.
     *
     * @throws InvalidInputException for a bad directory or file name
     * @throws StoreUnavailableException when the database cannot be reached
     */
    public static MigrationStatus status(DatabaseUrl url, Path dir, String resource) {
        String res = resource == null ? DEFAULT_RESOURCE : Names.require("resource", resource);
        List<MigrationFile> files = MigrationFile.scan(dir);
        try (Database db = Database.open(url)) {
            Map<String, Integer> columns = db.columnsOf("schema_migrations");
            Map<Long, Row> rows = columns == null || !columns.containsKey("version") ? Map.of() : applied(db, columns);
            Long token = null;
            if (db.columnsOf("fence_tokens") != null) {
                token = db.queryLong("fence_token", res);
                List<String> others = token == null ? otherResources(db, res) : List.of();
                if (!others.isEmpty()) {
                    // One database, one resource: the row that is there is the database's fence, whatever
                    // resource was asked about (a re-read after FENCED must show the token that fenced).
                    res = others.get(0);
                    token = db.queryLong("fence_token", res);
                }
            }
            List<MigrationStatus.Entry> entries = new ArrayList<>();
            for (MigrationFile f : files) {
                Row row = rows.get(f.version());
                entries.add(new MigrationStatus.Entry(
                        f.label(),
                        f.fileName(),
                        row != null,
                        row == null ? null : row.token(),
                        row == null ? null : row.holder()));
            }
            for (Map.Entry<Long, Row> e : rows.entrySet()) {
                if (files.stream().noneMatch(f -> f.version() == e.getKey())) {
                    entries.add(new MigrationStatus.Entry(
                            e.getValue().stored(),
                            null,
                            true,
                            e.getValue().token(),
                            e.getValue().holder()));
                }
            }
            entries.sort(java.util.Comparator.comparingLong(en -> Long.parseLong(en.version())));
            return new MigrationStatus(
                    url.describe(),
                    dir.toString(),
                    res,
                    token == null ? 0 : token,
                    db.columnsOf("flyway_schema_history") != null,
                    entries);
        } catch (SQLException e) {
            throw Database.failure(url, e);
        }
    }

    // --- inside ------------------------------------------------------------------------------------------

    /** What the database's {@code schema_migrations} looks like: whether its version column is a number. */
    private record Schema(Map<String, Integer> columns, boolean numericVersion) {}

    /** An applied version as {@code schema_migrations} has it. */
    private record Row(String stored, Long token, String holder) {}

    private sealed interface Step {
        record Apply(Applied applied) implements Step {}

        record Skip(Skipped skipped) implements Step {}

        record Fence(Fenced fenced) implements Step {}

        record Fail(int line, String message, boolean rolledBack) implements Step {}

        /** The statement at {@code line} ran and ended the transaction that held the claim. */
        record Ended(int line) implements Step {}
    }

    /**
     * Creates or adopts fence's tables and seeds the resource's fence row (token 0), each step committed
     * on its own: none of it applies a migration, and a concurrent runner doing the same is tolerated.
     */
    private static Schema prepare(Database db, String resource) throws SQLException {
        db.connection().setAutoCommit(true);
        if (db.columnsOf("flyway_schema_history") != null) {
            throw new InvalidInputException("the database " + db.url().describe() + " is managed by Flyway"
                    + " (it has flyway_schema_history): fence migrate does not write Flyway's history, whose ranks"
                    + " and checksums are Flyway's own, so it refuses rather than apply migrations Flyway would not"
                    + " know of. Run these migrations with Flyway, or use fence migrate on a database of its own");
        }
        SQLException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            try {
                Map<String, Integer> columns = db.columnsOf("schema_migrations");
                if (columns == null) {
                    execute(db, db.sql("create_migrations_table"));
                    columns = db.columnsOf("schema_migrations");
                } else if (!columns.containsKey("version")) {
                    throw new InvalidInputException("the database " + db.url().describe()
                            + " has a schema_migrations table without a version column: fence migrate adopts"
                            + " only a schema_migrations(version) table; rename that table or use another database");
                }
                if (!columns.containsKey("applied_token")) {
                    execute(db, db.sql("add_applied_token"));
                }
                if (!columns.containsKey("applied_holder")) {
                    execute(db, db.sql("add_applied_holder"));
                }
                execute(db, db.sql("create_fence_table"));
                // An earlier fence made resource a case-insensitive VARCHAR on MariaDB/MySQL: a lease on
                // DB/MIGRATIONS would claim db/migrations' row. Made binary before any row is read or claimed.
                if (db.has("binary_fence_table")
                        && !Database.isBinary(db.columnsOf("fence_tokens").get("resource"))) {
                    execute(db, db.sql("binary_fence_table"));
                }
                db.update("seed_fence_row", resource);
                List<String> others = otherResources(db, resource);
                if (!others.isEmpty()) {
                    db.update("unseed_fence_row", resource);
                    throw fencedByAnother(db, resource, others);
                }
                columns = db.columnsOf("schema_migrations");
                return new Schema(columns, Database.isNumeric(columns.get("version")));
            } catch (SQLException e) {
                if (Database.isConnectionFailure(e)) {
                    throw e;
                }
                // Another runner made the same table or column at the same moment: look again.
                last = e;
            }
        }
        throw last;
    }

    /** The resources other than {@code resource} that have a fence row in {@code db}. */
    private static List<String> otherResources(Database db, String resource) throws SQLException {
        List<String> out = new ArrayList<>();
        try (var ps = db.connection().prepareStatement(db.sql("other_resources"))) {
            ps.setString(1, resource);
            try (var rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        }
        return out;
    }

    /**
     * A database is fenced by one resource, the first one a run names: otherwise an agent fenced on one
     * resource would take a lease on another and migrate the same schema anyway.
     */
    private static InvalidInputException fencedByAnother(Database db, String resource, List<String> others) {
        return new InvalidInputException("the database " + db.url().describe() + " is fenced by resource "
                + String.join(", ", others) + ", not " + resource + ": its fence row in fence_tokens names the"
                + " resource every fence migrate on it must hold (one database, one resource). Use --resource "
                + Printable.shellWord(others.get(0))
                + (others.size() > 1 ? " (more than one row: delete the rows no one uses)" : ""));
    }

    private static void execute(Database db, String sql) throws SQLException {
        try (Statement s = db.connection().createStatement()) {
            s.execute(sql);
        }
    }

    /** PostgreSQL, SQLite: claim, check, statements and record in one transaction. */
    private Step inTransaction(
            Database db, Schema schema, Request r, MigrationFile file, List<SqlStatements.Statement> statements)
            throws SQLException {
        db.connection().setAutoCommit(false);
        try {
            Step refusal = claim(db, schema, r, file);
            if (refusal != null) {
                db.connection().rollback();
                return refusal;
            }
            // A mark inside the claim's transaction: rolling back to it after a failure proves the transaction
            // is still the one that holds the claim, so "rolled back" is said only when it is true.
            execute(db, "SAVEPOINT fence_claimed");
            Database.TransactionState claimed = db.transactionState();
            if (claimed != null && !claimed.standardStrings()) {
                throw new InvalidInputException("standard_conforming_strings is off on fence's connection to "
                        + db.url().describe() + " (a setting of the server, the database or the role)"
                        + ", which fence migrate refuses: it splits and screens a migration"
                        + " reading '…' as standard_conforming_strings = on has it, and the driver would split"
                        + " the statements otherwise and run what fence never screened. Set it back to on"
                        + " (ALTER DATABASE … SET standard_conforming_strings = on); nothing was applied");
            }
            List<String> bookkeeping = db.bookkeeping(r.resource());
            Step ran = runStatements(db, statements, claimed);
            if (ran == null) {
                ran = bookkeepingChanged(db, r.resource(), statements, bookkeeping);
            }
            if (ran instanceof Step.Ended ended) {
                db.rollbackQuietly();
                return new Step.Fail(
                        ended.line(),
                        "this statement ended fence's transaction, the one that holds the claim on the fence row:"
                                + " what ran before it, the claim included, was committed or rolled back by the"
                                + " database, and what ran after it ran unfenced (a newer token may have claimed"
                                + " meanwhile). fence stopped there, rolled back what it could and did not record"
                                + " the version; re-read with fence migrate status and inspect the schema",
                        false);
            }
            Step.Fail fail = (Step.Fail) ran;
            if (fail != null) {
                if (rollBackToClaim(db)) {
                    db.connection().rollback();
                    return new Step.Fail(fail.line(), fail.message(), true);
                }
                db.rollbackQuietly();
                return new Step.Fail(
                        fail.line(),
                        fail.message() + " (the database ended fence's transaction before this failure, so fence"
                                + " cannot say what of this migration stays applied; the version is not recorded:"
                                + " re-read with fence migrate status and inspect the schema)",
                        false);
            }
            record(db, schema, r, file);
            db.connection().commit();
            return new Step.Apply(new Applied(file.fileName(), file.version(), r.token(), r.reapply()));
        } catch (SQLException | RuntimeException e) {
            db.rollbackQuietly();
            throw e;
        } finally {
            restoreAutoCommit(db);
        }
    }

    /** True when the claim's transaction is still open (its savepoint exists) and is now back at the claim. */
    private static boolean rollBackToClaim(Database db) throws SQLException {
        try {
            execute(db, "ROLLBACK TO SAVEPOINT fence_claimed");
            return true;
        } catch (SQLException e) {
            if (Database.isConnectionFailure(e)) {
                throw e;
            }
            return false; // no such savepoint: the transaction it was in has ended
        }
    }

    /**
     * Back to autocommit; SQLite's driver commits on the way and fails when the database itself ended the
     * transaction ("no transaction is active"), which is not an unreachable database.
     */
    private static void restoreAutoCommit(Database db) throws SQLException {
        try {
            db.connection().setAutoCommit(true);
        } catch (SQLException e) {
            if (Database.isConnectionFailure(e)) {
                throw e;
            }
            if (!db.connection().getAutoCommit()) {
                db.connection().setAutoCommit(true); // the driver's commit failed, its switch did not happen
            }
        }
    }

    /**
     * MariaDB/MySQL: under a named lock, the claim (and the check of the version) commits first, then the
     * statements run (each committing by itself), then the record.
     */
    private Step claimFirst(
            Database db, Schema schema, Request r, MigrationFile file, List<SqlStatements.Statement> statements)
            throws SQLException {
        String lock = lockName(r.resource());
        Long got = db.queryLong("lock", lock, LOCK_WAIT_SECONDS);
        if (got == null || got != 1) {
            throw new StoreUnavailableException("another fence migrate on " + r.resource() + " in "
                    + db.url().describe() + " held its lock for more than " + LOCK_WAIT_SECONDS + "s");
        }
        try {
            db.connection().setAutoCommit(false);
            Step refusal;
            try {
                refusal = claim(db, schema, r, file);
                if (refusal != null) {
                    db.connection().rollback();
                    return refusal;
                }
                db.connection().commit();
            } catch (SQLException | RuntimeException e) {
                db.rollbackQuietly();
                throw e;
            } finally {
                db.connection().setAutoCommit(true);
            }
            List<String> bookkeeping = db.bookkeeping(r.resource());
            Step.Fail fail = (Step.Fail) runStatements(db, statements, null);
            if (fail == null) {
                fail = bookkeepingChanged(db, r.resource(), statements, bookkeeping);
            }
            if (fail != null) {
                return new Step.Fail(
                        fail.line(),
                        fail.message() + " (MariaDB/MySQL commit DDL by itself: the statements before line "
                                + fail.line() + " stay applied; the version is not recorded)",
                        false);
            }
            record(db, schema, r, file);
            return new Step.Apply(new Applied(file.fileName(), file.version(), r.token(), r.reapply()));
        } finally {
            db.queryLong("unlock", lock);
        }
    }

    /**
     * Claims the fence row and checks the version; null when the migration may run, else the step that
     * ends it (the caller rolls back).
     */
    private static Step claim(Database db, Schema schema, Request r, MigrationFile file) throws SQLException {
        List<String> others = otherResources(db, r.resource());
        if (!others.isEmpty()) {
            throw fencedByAnother(db, r.resource(), others); // a runner of another resource seeded meanwhile
        }
        int claimed = db.update("claim", r.token(), r.resource(), r.token());
        if (claimed == 0) {
            Long current = db.queryLong("fence_token", r.resource());
            long cur = current == null ? 0 : current;
            return new Step.Fence(new Fenced(
                    r.resource(),
                    null,
                    r.token(),
                    cur,
                    Reason.STALE_TOKEN,
                    null,
                    null,
                    "token " + cur + " has already written to " + r.resource() + " (the database's own fence row"
                            + " in fence_tokens); nothing was applied"));
        }
        Row row = applied(db, schema.columns()).get(file.version());
        if (!r.reapply()) {
            return row == null ? null : new Step.Skip(new Skipped(file.fileName(), row.token(), row.holder()));
        }
        if (row == null) {
            throw new InvalidInputException(file.fileName() + " is not applied to "
                    + db.url().describe() + ", so there is nothing to reapply; re-read with fence migrate status");
        }
        // The token number alone is no identity (first grants of different resources share it): the holder
        // must match too, and the resource does, since the database is fenced by one.
        if (row.token() == null || row.token() != r.token() || !java.util.Objects.equals(r.holder(), row.holder())) {
            Long current = db.queryLong("fence_token", r.resource());
            return new Step.Fence(new Fenced(
                    r.resource(),
                    null,
                    r.token(),
                    current == null ? 0 : current,
                    Reason.FOREIGN_OVERWRITE,
                    // Who applied the version, not who holds the lease now: the detail names them.
                    null,
                    null,
                    "version " + file.label() + " was applied "
                            + (row.token() == null
                                    ? "without a fence token (by another tool)"
                                    : "under token " + row.token()
                                            + (row.holder() == null ? "" : " by " + Printable.name(row.holder())))
                            + ", not under your token " + r.token() + " by " + Printable.name(r.holder())
                            + "; reapply is only for a version you applied"));
        }
        return null;
    }

    /**
     * Runs {@code statements} in order: null when all ran, else the {@link Step.Fail} of the first the
     * database refused, or, given the state of the transaction that holds the claim ({@code claimed}), the
     * {@link Step.Ended} of the first after which the transaction is another one, or a {@link Step.Fail} for
     * the first that turned standard_conforming_strings off. Checked after every statement, so that what the
     * screen could not see (a COMMIT split out of a statement fence read as one, a setting named by dynamic
     * SQL) stops the run before another statement runs in the wrong transaction or is split otherwise.
     */
    private Step runStatements(Database db, List<SqlStatements.Statement> statements, Database.TransactionState claimed)
            throws SQLException {
        for (SqlStatements.Statement s : statements) {
            try (Statement st = db.connection().createStatement()) {
                st.execute(s.sql());
            } catch (SQLException e) {
                if (Database.isConnectionFailure(e)) {
                    throw e;
                }
                return new Step.Fail(s.line(), e.getMessage(), false);
            }
            seam.ran(s, db.connection());
            if (claimed != null) {
                Database.TransactionState now = db.transactionState();
                if (now.id() != claimed.id()) {
                    return new Step.Ended(s.line());
                }
                if (!now.standardStrings()) {
                    return new Step.Fail(
                            s.line(),
                            "this statement turned standard_conforming_strings off, which fence migrate refuses:"
                                    + " it splits and screens a migration reading '…' as standard_conforming_strings"
                                    + " = on has it, and the driver would split the statements after it otherwise."
                                    + " Leave the setting alone and write backslashes in E'…' strings",
                            false);
                }
            }
        }
        return null;
    }

    /**
     * A {@link Step.Fail} when fence's bookkeeping differs from {@code before}, read right after the claim: the
     * migration changed the fence rows, who applied what, or the objects that make fence's tables (through a
     * name the screen could not read, such as dynamic SQL). Read after what the migration deferred to its
     * commit (PostgreSQL's deferred constraint triggers) has run. Null when it is unchanged.
     */
    private static Step.Fail bookkeepingChanged(
            Database db, String resource, List<SqlStatements.Statement> statements, List<String> before)
            throws SQLException {
        if (statements.isEmpty()) {
            return null;
        }
        int last = statements.get(statements.size() - 1).line();
        if (db.has("fire_deferred")) {
            try {
                execute(db, db.sql("fire_deferred"));
            } catch (SQLException e) {
                if (Database.isConnectionFailure(e)) {
                    throw e;
                }
                return new Step.Fail(
                        last, "a deferred constraint or trigger of this migration failed: " + e.getMessage(), false);
            }
        }
        if (db.bookkeeping(resource).equals(before)) {
            return null;
        }
        return new Step.Fail(
                last,
                "a statement of this migration (up to this, its last) changed fence's own bookkeeping: the fence"
                        + " rows in fence_tokens, who applied what in schema_migrations, the tables themselves"
                        + " (columns, constraints, indexes, triggers, rules, policies), or the default search_path"
                        + " by which the next run finds them. A migration may not touch them, by any name; the"
                        + " version is not recorded",
                false);
    }

    private static void record(Database db, Schema schema, Request r, MigrationFile file) throws SQLException {
        Object version = schema.numericVersion() ? (Object) file.version() : file.label();
        if (r.reapply()) {
            Row row = applied(db, schema.columns()).get(file.version());
            Object stored = schema.numericVersion() ? (Object) file.version() : row.stored();
            db.update("record_reapplied", r.token(), r.holder(), stored);
        } else {
            db.update("record_applied", version, r.token(), r.holder());
        }
    }

    /** Applied versions by number; rows whose version is not a number (no file can name them) are left out. */
    private static Map<Long, Row> applied(Database db, Map<String, Integer> columns) throws SQLException {
        Map<Long, Row> out = new LinkedHashMap<>();
        boolean fenceColumns = columns.containsKey("applied_token") && columns.containsKey("applied_holder");
        String sql = db.sql(fenceColumns ? "applied" : "applied_versions");
        try (Statement s = db.connection().createStatement();
                var rs = s.executeQuery(sql)) {
            while (rs.next()) {
                String stored = rs.getString(1);
                if (stored == null || !stored.strip().matches("[0-9]{1,18}")) {
                    continue;
                }
                Long token = null;
                String holder = null;
                if (fenceColumns) {
                    long t = rs.getLong(2);
                    token = rs.wasNull() ? null : t;
                    holder = rs.getString(3);
                }
                out.put(Long.parseLong(stored.strip()), new Row(stored, token, holder));
            }
        }
        return out;
    }

    /** MariaDB's lock names are at most 64 characters. */
    private static String lockName(String resource) {
        String name = "fence-migrate:" + resource;
        return name.length() <= 64 ? name : name.substring(0, 48) + ":" + Integer.toHexString(name.hashCode());
    }
}
