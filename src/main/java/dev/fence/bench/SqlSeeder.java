package dev.fence.bench;

import dev.fence.core.EventType;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.Properties;

/**
 * Seeds a SQLite or PostgreSQL store with batched inserts in one transaction per call, into the tables
 * and columns the store's own {@code schema.sql} makes ({@code resources}, {@code events}), with the values
 * its grants and appends write.
 */
final class SqlSeeder implements Seeder {
    private static final int BATCH = 5_000;

    private final Connection c;
    private final String schema;
    private final boolean postgres;

    private SqlSeeder(Connection c, String schema, boolean postgres) {
        this.c = c;
        this.schema = schema;
        this.postgres = postgres;
    }

    /** A seeder for the SQLite store file at {@code path}. */
    static SqlSeeder sqlite(java.nio.file.Path path) throws IOException {
        try {
            Connection c = DriverManager.getConnection("jdbc:sqlite:" + path);
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA busy_timeout = 10000");
            }
            c.setAutoCommit(false);
            return new SqlSeeder(c, "", false);
        } catch (SQLException e) {
            throw new IOException("cannot open " + path + " to seed it: " + e.getMessage(), e);
        }
    }

    /** A seeder for the PostgreSQL store in {@code database} of {@code server}. */
    static SqlSeeder postgres(PostgresServerUrl server, String database) throws IOException {
        try {
            Properties p = new Properties();
            p.setProperty("user", server.user());
            if (server.password() != null) {
                p.setProperty("password", server.password());
            }
            p.setProperty("reWriteBatchedInserts", "true");
            Connection c = DriverManager.getConnection(server.jdbc(database), p);
            c.setAutoCommit(false);
            return new SqlSeeder(c, "fence.", true);
        } catch (SQLException e) {
            throw new IOException("cannot connect to " + database + " to seed it: " + e.getMessage(), e);
        }
    }

    @Override
    public void leases(long from, long to, String generation, long floor, long nowMillis) throws IOException {
        String sql = "INSERT INTO " + schema + "resources (resource, version, latest_granted, highest_accepted,"
                + (postgres ? " lease_generation," : "")
                + " lease_holder, lease_token, lease_granted_at, lease_expires_at, lease_released, base_token)"
                + " VALUES (?, 1, ?, 0, " + (postgres ? "?, " : "") + "?, ?, ?, ?, ?, 0)";
        run(sql, from, to, (st, k) -> {
            int i = 0;
            st.setString(++i, Seeded.resource(k));
            st.setLong(++i, floor + 1);
            if (postgres) {
                st.setString(++i, generation);
            }
            st.setString(++i, Seeded.holder(k));
            st.setLong(++i, floor + 1);
            st.setLong(++i, nowMillis);
            st.setLong(++i, nowMillis + Seeded.LEASE_MILLIS);
            if (postgres) {
                st.setBoolean(++i, false);
            } else {
                st.setInt(++i, 0);
            }
        });
    }

    @Override
    public void events(long from, long to, long t0Millis) throws IOException {
        String sql = "INSERT INTO " + schema + "events (at, type, resource, repo, ref, holder, pusher, token)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
        run(sql, from, to, (st, j) -> {
            long k = Seeded.leaseOfEvent(j);
            boolean grant = j % 2 == 0;
            int i = 0;
            st.setLong(++i, t0Millis + j);
            st.setString(++i, (grant ? EventType.GRANT : EventType.ACCEPT).label());
            st.setString(++i, Seeded.resource(k));
            st.setString(++i, Seeded.repo(k));
            st.setString(++i, Seeded.ref(k));
            st.setString(++i, Seeded.holder(k));
            if (grant) {
                st.setNull(++i, Types.VARCHAR);
            } else {
                st.setString(++i, Seeded.holder(k));
            }
            st.setLong(++i, j + 1);
        });
    }

    @Override
    public long events() throws IOException {
        // Outside any transaction: a read transaction left open would keep counting an old snapshot.
        try {
            c.setAutoCommit(true);
            long n;
            try (Statement s = c.createStatement();
                    java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM " + schema + "events")) {
                rs.next();
                n = rs.getLong(1);
            }
            c.setAutoCommit(false);
            return n;
        } catch (SQLException e) {
            throw new IOException("cannot count the ledger: " + e.getMessage(), e);
        }
    }

    @FunctionalInterface
    private interface Binder {
        void bind(PreparedStatement st, long n) throws SQLException;
    }

    private void run(String sql, long from, long to, Binder binder) throws IOException {
        try (PreparedStatement st = c.prepareStatement(sql)) {
            int pending = 0;
            for (long n = from; n < to; n++) {
                binder.bind(st, n);
                st.addBatch();
                if (++pending == BATCH) {
                    st.executeBatch();
                    pending = 0;
                }
            }
            if (pending > 0) {
                st.executeBatch();
            }
            c.commit();
        } catch (SQLException e) {
            try {
                c.rollback();
            } catch (SQLException ignored) {
                // the connection is going anyway
            }
            throw new IOException("seeding failed: " + e.getMessage(), e);
        }
    }

    /**
     * PostgreSQL: as autovacuum leaves a store that has run for a while, vacuumed and analysed (fresh
     * statistics; no vacuum left to run during the measurement), with the checkpoint its writes set off
     * done (its writes would otherwise land on whichever store's calls happen to run then). SQLite: nothing.
     */
    @Override
    public void settle() throws IOException {
        if (!postgres) {
            return;
        }
        try {
            // VACUUM runs outside a transaction; the seeding writes after it batch in one again.
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                s.execute("VACUUM (ANALYZE) " + schema + "resources");
                s.execute("VACUUM (ANALYZE) " + schema + "events");
                try {
                    s.execute("CHECKPOINT");
                } catch (SQLException e) {
                    // A role without pg_checkpoint: the server's own checkpoint then runs when it runs.
                }
            } finally {
                c.setAutoCommit(false);
            }
        } catch (SQLException e) {
            throw new IOException("cannot vacuum the store: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        try {
            c.close();
        } catch (SQLException e) {
            // best effort
        }
    }
}
