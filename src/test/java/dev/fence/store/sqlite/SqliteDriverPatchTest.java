package dev.fence.store.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Executable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteConnectionConfig;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;
import org.sqlite.SQLiteJDBCLoader;
import org.sqlite.core.DirectAccess;
import org.sqlite.core.NativeDB;
import org.sqlite.util.Logger;
import org.sqlite.util.LoggerFactory;

/**
 * fence's classes in sqlite-jdbc's packages (see {@link DirectAccess}): each is checked against the
 * driver itself. {@code SQLiteConnectionConfig} and {@code util.LoggerFactory} against the driver's own
 * classes of those names, loaded from the driver's jar alone (the shaded jar leaves them out), and through
 * the driver's JDBC layer on a real file; {@code DirectAccess} against the JDBC layer on the same file.
 */
class SqliteDriverPatchTest {
    private static URLClassLoader driverOnly;

    @TempDir
    Path tmp;

    @BeforeAll
    static void loadTheDriversOwnClasses() {
        URL driverJar = SQLiteConfig.class.getProtectionDomain().getCodeSource().getLocation();
        driverOnly = new URLClassLoader(new URL[] {driverJar}, null);
    }

    @AfterAll
    static void close() throws Exception {
        driverOnly.close();
    }

    @Test
    void theDriverIsTheVersionThePatchWasWrittenFor() {
        assertEquals(
                DirectAccess.PATCHED_FOR,
                SQLiteJDBCLoader.getVersion(),
                "the pom's sqlite.version is not the driver fence's classes in src/main/java/org/sqlite were"
                        + " written for: compare them with that driver's classes of the same names, update them,"
                        + " then DirectAccess.PATCHED_FOR");
    }

    @Test
    void aDriverWithoutTheCallsTheBindingMakesIsNamedInTheFailure() {
        String message = DirectAccess.mismatch(new NoSuchMethodError("'int org.sqlite.core.NativeDB.step(long)'"));
        assertTrue(message.contains(DirectAccess.PATCHED_FOR) && message.contains("NativeDB.step"), message);
    }

    // --- The replacements keep the driver's API (the shaded jar leaves the driver's copies out).

    private static Set<String> api(Class<?> c) {
        Set<String> out = new TreeSet<>();
        for (Method m : c.getDeclaredMethods()) {
            if (!Modifier.isPrivate(m.getModifiers()) && !m.isSynthetic()) {
                out.add(describe(m) + " -> " + m.getReturnType().getName());
            }
        }
        for (Executable e : c.getDeclaredConstructors()) {
            if (!Modifier.isPrivate(e.getModifiers())) {
                out.add(describe(e));
            }
        }
        return out;
    }

    private static String describe(Executable e) {
        return Modifier.toString(e.getModifiers() & (Modifier.PUBLIC | Modifier.PROTECTED | Modifier.STATIC)) + " "
                + e.getName()
                + Arrays.stream(e.getParameterTypes()).map(Class::getName).collect(Collectors.joining(",", "(", ")"));
    }

    @ParameterizedTest
    @ValueSource(classes = {SQLiteConnectionConfig.class, LoggerFactory.class})
    void hasTheDriversApi(Class<?> replacement) throws Exception {
        Class<?> original = driverOnly.loadClass(replacement.getName());
        assertNotEquals(
                replacement.getProtectionDomain().getCodeSource().getLocation(),
                original.getProtectionDomain().getCodeSource().getLocation(),
                "the tests must run against fence's copy");
        assertEquals(api(original), api(replacement));
    }

    // --- SQLiteConnectionConfig: the driver's settings and dates; only the formatter is made later.

    private static Properties pragmas(String... keysAndValues) {
        Properties p = new Properties();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            p.setProperty(keysAndValues[i], keysAndValues[i + 1]);
        }
        return p;
    }

    private static final List<Properties> PRAGMA_TABLES = List.of(
            pragmas(),
            pragmas(
                    "date_class", "TEXT",
                    "date_precision", "SECONDS",
                    "date_string_format", "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
                    "transaction_mode", "IMMEDIATE",
                    "jdbc.get_generated_keys", "false"),
            pragmas("date_class", "REAL", "transaction_mode", "EXCLUSIVE", "date_string_format", "dd/MM/yy HH:mm"));

    /** Everything a config tells the driver, by name, read through reflection from either class. */
    private static List<String> observe(Object config) throws Exception {
        Class<?> c = config.getClass();
        List<String> out = new ArrayList<>();
        for (String getter : List.of(
                "getDateClass",
                "getDatePrecision",
                "getDateStringFormat",
                "getDateMultiplier",
                "getTransactionIsolation",
                "getTransactionMode",
                "isAutoCommit",
                "isGetGeneratedKeys")) {
            out.add(getter + "=" + c.getMethod(getter).invoke(config));
        }
        Method prefix = c.getDeclaredMethod("transactionPrefix");
        prefix.setAccessible(true);
        out.add("transactionPrefix=" + prefix.invoke(config));
        Object format = c.getMethod("getDateFormat").invoke(config);
        Date instant = new Date(1_764_633_600_123L);
        String text = (String) format.getClass().getMethod("format", Date.class).invoke(format, instant);
        out.add("format=" + text);
        out.add("parse="
                + ((Date) format.getClass().getMethod("parse", String.class).invoke(format, text)).getTime());
        return out;
    }

    @Test
    void configsReadFromAPragmaTableTellTheDriverWhatItsOwnWould() throws Exception {
        Method originalFromTable = driverOnly
                .loadClass(SQLiteConnectionConfig.class.getName())
                .getMethod("fromPragmaTable", Properties.class);
        for (Properties table : PRAGMA_TABLES) {
            Object original = originalFromTable.invoke(null, table);
            SQLiteConnectionConfig patched = SQLiteConnectionConfig.fromPragmaTable(table);
            assertEquals(observe(original), observe(patched), table.toString());
            Object originalCopy = original.getClass().getMethod("copyConfig").invoke(original);
            assertEquals(observe(originalCopy), observe(patched.copyConfig()), "copy of " + table);
        }
    }

    @Test
    void aChangedFormatIsTheOneUsedNext() throws Exception {
        SQLiteConnectionConfig c = SQLiteConnectionConfig.fromPragmaTable(new Properties());
        String before = c.getDateFormat().format(new Date(0));
        c.setDateStringFormat("yyyy");
        assertEquals("yyyy", c.getDateFormat().getPattern());
        assertNotEquals(before, c.getDateFormat().format(new Date(0)));
    }

    @Test
    void anInvalidFormatFailsAtTheFirstDateInsteadOfAtTheConnection() throws Exception {
        // What the patch changes: the driver's class builds its formatter (and fails) when made.
        Properties bad = pragmas("date_string_format", "yyyy-bb");
        Method originalFromTable = driverOnly
                .loadClass(SQLiteConnectionConfig.class.getName())
                .getMethod("fromPragmaTable", Properties.class);
        InvocationTargetException e =
                assertThrows(InvocationTargetException.class, () -> originalFromTable.invoke(null, bad));
        assertEquals(
                IllegalArgumentException.class.getName(),
                e.getCause().getClass().getName());
        SQLiteConnectionConfig patched = SQLiteConnectionConfig.fromPragmaTable(bad);
        assertThrows(IllegalArgumentException.class, patched::getDateFormat);
    }

    @Test
    void theDriversJdbcLayerStoresAndReadsDatesThroughIt() throws Exception {
        Path file = tmp.resolve("dates.db");
        Date instant = new Date(1_764_633_600_123L);
        Object originalFormat = driverOnly
                .loadClass("org.sqlite.date.FastDateFormat")
                .getMethod("getInstance", String.class)
                .invoke(null, SQLiteConfig.DEFAULT_DATE_STRING_FORMAT);
        String asTheDriverFormats = (String)
                originalFormat.getClass().getMethod("format", Date.class).invoke(originalFormat, instant);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file, pragmas("date_class", "TEXT"));
                Statement s = c.createStatement()) {
            s.executeUpdate("CREATE TABLE d (at)");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO d VALUES (?)")) {
                p.setTimestamp(1, new Timestamp(instant.getTime()));
                p.executeUpdate();
            }
            try (ResultSet r = s.executeQuery("SELECT typeof(at), at, at AS again FROM d")) {
                assertTrue(r.next());
                assertEquals("text", r.getString(1));
                assertEquals(asTheDriverFormats, r.getString(2));
                assertEquals(instant.getTime(), r.getTimestamp(3).getTime(), "parsed back by the lazy formatter");
            }
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
                Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM d");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO d VALUES (?)")) {
                p.setTimestamp(1, new Timestamp(instant.getTime()));
                p.executeUpdate();
            }
            try (ResultSet r = s.executeQuery("SELECT typeof(at), at FROM d")) {
                assertTrue(r.next());
                assertEquals("integer", r.getString(1), "the driver's default date class");
                assertEquals(instant.getTime(), r.getLong(2));
            }
        }
    }

    // --- LoggerFactory: the driver's messages are dropped, and the driver still works.

    /** Records published to java.util.logging, where the driver's own class sends them without SLF4J. */
    private static final class Captured extends Handler {
        final List<LogRecord> records = new ArrayList<>();

        @Override
        public synchronized void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }

    @Test
    void theDriversOwnLoggerFactoryWouldPublishWhatFencesDrops() throws Exception {
        Captured captured = new Captured();
        java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
        root.addHandler(captured);
        try {
            Class<?> original = driverOnly.loadClass(LoggerFactory.class.getName());
            Object logger = original.getMethod("getLogger", Class.class).invoke(null, SqliteDriverPatchTest.class);
            Supplier<String> message = () -> "from the driver's own class";
            driverOnly
                    .loadClass(Logger.class.getName())
                    .getMethod("info", Supplier.class)
                    .invoke(logger, message);
            assertTrue(
                    captured.records.stream().anyMatch(r -> "from the driver's own class".equals(r.getMessage())),
                    "the control: the driver's class publishes");

            captured.records.clear();
            Logger patched = LoggerFactory.getLogger(SqliteDriverPatchTest.class);
            Supplier<String> unbuilt = () -> {
                throw new AssertionError("a message was built");
            };
            patched.trace(unbuilt);
            patched.info(unbuilt);
            patched.warn(unbuilt);
            patched.error(unbuilt, new RuntimeException());
            assertEquals(List.of(), captured.records);
        } finally {
            root.removeHandler(captured);
        }
    }

    @Test
    void theDriverLogsNothingWhileItWorks() throws Exception {
        // The driver's own class would publish here: at FINEST every statement it runs, at INFO a backup's
        // progress (a run against the driver's jar alone, with java.util.logging at ALL, shows them).
        Captured captured = new Captured();
        java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
        Level level = root.getLevel();
        root.setLevel(Level.ALL);
        root.addHandler(captured);
        Path copy = tmp.resolve("copy.db");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + tmp.resolve("logged.db"));
                Statement s = c.createStatement()) {
            s.executeUpdate("CREATE TABLE t (v TEXT)");
            s.executeUpdate("INSERT INTO t VALUES ('kept')");
            s.executeUpdate("backup to " + copy);
        } finally {
            root.removeHandler(captured);
            root.setLevel(level);
        }
        assertEquals(
                List.of(),
                captured.records.stream()
                        .filter(r ->
                                r.getLoggerName() != null && r.getLoggerName().startsWith("org.sqlite"))
                        .map(LogRecord::getMessage)
                        .toList());
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + copy);
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT v FROM t")) {
            assertTrue(r.next());
            assertEquals("kept", r.getString(1));
        }
    }

    // --- DirectAccess: the same results as the driver's JDBC layer on the same file.

    private static final Object[][] ROWS = {
        {1L, "plain", 42L, new byte[] {1, 2, 3}},
        {2L, "ünïcödé 😀 \u0000 after a NUL", Long.MIN_VALUE, new byte[] {0, -1, 127, -128}},
        {3L, "", Long.MAX_VALUE, null},
        {4L, null, null, new byte[] {9}},
    };

    private static NativeDB open(Path file) throws SQLException {
        return DirectAccess.open(file.toString(), new SQLiteConfig().getOpenModeFlags(), 3000);
    }

    @Test
    void readsWhatTheJdbcLayerWrote() throws Exception {
        Path file = tmp.resolve("read.db");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
                Statement s = c.createStatement()) {
            s.executeUpdate("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER, b BLOB)");
            try (PreparedStatement p = c.prepareStatement("INSERT INTO t VALUES (?, ?, ?, ?)")) {
                for (Object[] row : ROWS) {
                    p.setLong(1, (Long) row[0]);
                    p.setString(2, (String) row[1]);
                    p.setObject(3, row[2]);
                    p.setBytes(4, (byte[]) row[3]);
                    p.executeUpdate();
                }
            }
        }
        assertEquals(readThroughJdbc(file), readDirectly(file));
    }

    @Test
    void writesWhatTheJdbcLayerReads() throws Exception {
        Path file = tmp.resolve("write.db");
        NativeDB db = open(file);
        try {
            DirectAccess.exec(
                    db,
                    "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER, b BLOB);"
                            + " CREATE TABLE u (x)");
            long insert = DirectAccess.prepare(db, "INSERT INTO t VALUES (?, ?, ?, ?)");
            try {
                for (Object[] row : ROWS) {
                    DirectAccess.bindLong(db, insert, 1, (Long) row[0]);
                    DirectAccess.bindText(db, insert, 2, (String) row[1]);
                    if (row[2] == null) {
                        DirectAccess.bindNull(db, insert, 3);
                    } else {
                        DirectAccess.bindLong(db, insert, 3, (Long) row[2]);
                    }
                    DirectAccess.bindBlob(db, insert, 4, (byte[]) row[3]);
                    assertEquals(DirectAccess.DONE, DirectAccess.step(db, insert));
                    DirectAccess.reset(db, insert);
                }
            } finally {
                DirectAccess.finalizeStatement(db, insert);
            }
        } finally {
            DirectAccess.close(db);
        }
        List<String> jdbc = readThroughJdbc(file);
        assertEquals(ROWS.length, jdbc.size());
        for (int i = 0; i < ROWS.length; i++) {
            Object[] row = ROWS[i];
            assertEquals(row[0] + "|" + row[1] + "|" + row[2] + "|" + Arrays.toString((byte[]) row[3]), jdbc.get(i));
        }
        assertEquals(jdbc, readDirectly(file));
    }

    @Test
    void failsWithTheResultCodesTheJdbcLayerReports() throws Exception {
        Path file = tmp.resolve("errors.db");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
                Statement s = c.createStatement()) {
            s.executeUpdate("CREATE TABLE t (name TEXT UNIQUE)");
            s.executeUpdate("INSERT INTO t VALUES ('taken')");
            SQLiteException jdbc =
                    assertThrows(SQLiteException.class, () -> s.executeUpdate("INSERT INTO t VALUES ('taken')"));
            SQLiteException jdbcSyntax = assertThrows(SQLiteException.class, () -> s.executeUpdate("INSERT INTO"));

            NativeDB db = open(file);
            try {
                long insert = DirectAccess.prepare(db, "INSERT INTO t VALUES (?)");
                try {
                    DirectAccess.bindText(db, insert, 1, "taken");
                    SQLiteException direct = assertThrows(SQLiteException.class, () -> DirectAccess.step(db, insert));
                    assertEquals(jdbc.getResultCode(), direct.getResultCode());
                    assertEquals(SQLiteErrorCode.SQLITE_CONSTRAINT_UNIQUE, direct.getResultCode());
                } finally {
                    DirectAccess.finalizeStatement(db, insert);
                }
                SQLiteException syntax =
                        assertThrows(SQLiteException.class, () -> DirectAccess.prepare(db, "INSERT INTO"));
                assertEquals(jdbcSyntax.getResultCode(), syntax.getResultCode());

                // A writer holds the lock: both paths report SQLITE_BUSY, not a generic failure.
                s.executeUpdate("BEGIN IMMEDIATE");
                db.busy_timeout(0);
                SQLiteException busy =
                        assertThrows(SQLiteException.class, () -> DirectAccess.exec(db, "BEGIN IMMEDIATE"));
                assertEquals(SQLiteErrorCode.SQLITE_BUSY, busy.getResultCode());
                s.executeUpdate("COMMIT");
                DirectAccess.exec(db, "BEGIN IMMEDIATE; INSERT INTO t VALUES ('mine'); COMMIT");
            } finally {
                DirectAccess.close(db);
            }
            try (ResultSet r = s.executeQuery("SELECT count(*) FROM t")) {
                assertTrue(r.next());
                assertEquals(2, r.getInt(1), "the direct write is visible to the JDBC connection");
            }
        }
    }

    private static List<String> readThroughJdbc(Path file) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT id, name, n, b FROM t ORDER BY id")) {
            List<String> names = new ArrayList<>();
            for (int i = 1; i <= r.getMetaData().getColumnCount(); i++) {
                names.add(r.getMetaData().getColumnName(i));
            }
            assertEquals(List.of("id", "name", "n", "b"), names);
            while (r.next()) {
                long n = r.getLong(3);
                String nText = r.wasNull() ? "null" : Long.toString(n);
                rows.add(r.getLong(1) + "|" + r.getString(2) + "|" + nText + "|" + Arrays.toString(r.getBytes(4)));
            }
        }
        return rows;
    }

    private static List<String> readDirectly(Path file) throws SQLException {
        List<String> rows = new ArrayList<>();
        NativeDB db = open(file);
        try {
            long select = DirectAccess.prepare(db, "SELECT id, name, n, b FROM t ORDER BY id");
            try {
                assertEquals(4, DirectAccess.columnCount(db, select));
                List<String> names = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    names.add(DirectAccess.columnName(db, select, i));
                }
                assertEquals(List.of("id", "name", "n", "b"), names);
                while (DirectAccess.step(db, select) == DirectAccess.ROW) {
                    String n = DirectAccess.columnType(db, select, 2) == DirectAccess.NULL
                            ? "null"
                            : Long.toString(DirectAccess.columnLong(db, select, 2));
                    rows.add(DirectAccess.columnLong(db, select, 0) + "|" + DirectAccess.columnText(db, select, 1) + "|"
                            + n + "|" + Arrays.toString(DirectAccess.columnBlob(db, select, 3)));
                }
            } finally {
                DirectAccess.finalizeStatement(db, select);
            }
        } finally {
            DirectAccess.close(db);
        }
        assertFalse(rows.isEmpty());
        return rows;
    }

    @Test
    void opensAFileTheJdbcLayerThenOpens() throws Exception {
        Path file = tmp.resolve("made-directly.db");
        NativeDB db = open(file);
        DirectAccess.exec(db, "PRAGMA journal_mode = WAL; CREATE TABLE t (v)");
        DirectAccess.close(db);
        assertTrue(Files.exists(file));
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
                Statement s = c.createStatement();
                ResultSet r = s.executeQuery("PRAGMA journal_mode")) {
            assertTrue(r.next());
            assertEquals("wal", r.getString(1));
        }
    }
}
