package org.sqlite;

import java.sql.Connection;
import java.util.EnumMap;
import java.util.Map;
import java.util.Properties;
import org.sqlite.date.FastDateFormat;

/**
 * fence's replacement for sqlite-jdbc's class of this name (same package, same public API; the shaded jar
 * leaves the driver's own copy out). It differs in one way: the date formatter is made when the driver
 * first formats or parses a date, not when every connection's settings are made.
 *
 * <p>Why: the driver's class builds a {@link FastDateFormat} in its constructor, which loads the JDK's
 * time-zone, calendar and locale data; in a fresh JVM that costs tens of milliseconds, and every fence
 * hook is a fresh JVM that stores no dates through the driver (fence keeps instants as epoch
 * milliseconds). Behaviour is otherwise the driver's: the same defaults, the same pragma names, the same
 * begin statements. {@code SqliteDriverPatchTest} checks that against the driver's own class, loaded from
 * the driver's jar (its API, and what each tells the driver for the same pragma tables, dates included),
 * and through the driver's JDBC layer on a real file; it fails the build on another driver version than
 * {@link org.sqlite.core.DirectAccess#PATCHED_FOR}.
 *
 * <p>An invalid {@code date_string_format} is reported when the first date is formatted rather than
 * when the connection opens.
 */
public class SQLiteConnectionConfig implements Cloneable {
    private static final Map<SQLiteConfig.TransactionMode, String> BEGIN_COMMANDS =
            new EnumMap<>(SQLiteConfig.TransactionMode.class);

    static {
        BEGIN_COMMANDS.put(SQLiteConfig.TransactionMode.DEFERRED, "begin;");
        BEGIN_COMMANDS.put(SQLiteConfig.TransactionMode.IMMEDIATE, "begin immediate;");
        BEGIN_COMMANDS.put(SQLiteConfig.TransactionMode.EXCLUSIVE, "begin exclusive;");
    }

    private SQLiteConfig.DateClass dateClass = SQLiteConfig.DateClass.INTEGER;
    private SQLiteConfig.DatePrecision datePrecision = SQLiteConfig.DatePrecision.MILLISECONDS;
    private String dateStringFormat = SQLiteConfig.DEFAULT_DATE_STRING_FORMAT;
    /** Made from {@link #dateStringFormat} on first use; null until then. */
    private volatile FastDateFormat dateFormat;

    private int transactionIsolation = Connection.TRANSACTION_SERIALIZABLE;
    private SQLiteConfig.TransactionMode transactionMode = SQLiteConfig.TransactionMode.DEFERRED;
    private boolean autoCommit = true;
    private boolean getGeneratedKeys = true;

    public static SQLiteConnectionConfig fromPragmaTable(Properties pragmaTable) {
        return new SQLiteConnectionConfig(
                SQLiteConfig.DateClass.getDateClass(pragmaTable.getProperty(
                        SQLiteConfig.Pragma.DATE_CLASS.pragmaName, SQLiteConfig.DateClass.INTEGER.name())),
                SQLiteConfig.DatePrecision.getPrecision(pragmaTable.getProperty(
                        SQLiteConfig.Pragma.DATE_PRECISION.pragmaName, SQLiteConfig.DatePrecision.MILLISECONDS.name())),
                pragmaTable.getProperty(
                        SQLiteConfig.Pragma.DATE_STRING_FORMAT.pragmaName, SQLiteConfig.DEFAULT_DATE_STRING_FORMAT),
                Connection.TRANSACTION_SERIALIZABLE,
                SQLiteConfig.TransactionMode.getMode(pragmaTable.getProperty(
                        SQLiteConfig.Pragma.TRANSACTION_MODE.pragmaName, SQLiteConfig.TransactionMode.DEFERRED.name())),
                true,
                Boolean.parseBoolean(
                        pragmaTable.getProperty(SQLiteConfig.Pragma.JDBC_GET_GENERATED_KEYS.pragmaName, "true")));
    }

    public SQLiteConnectionConfig(
            SQLiteConfig.DateClass dateClass,
            SQLiteConfig.DatePrecision datePrecision,
            String dateStringFormat,
            int transactionIsolation,
            SQLiteConfig.TransactionMode transactionMode,
            boolean autoCommit,
            boolean getGeneratedKeys) {
        setDateClass(dateClass);
        setDatePrecision(datePrecision);
        setDateStringFormat(dateStringFormat);
        setTransactionIsolation(transactionIsolation);
        setTransactionMode(transactionMode);
        setAutoCommit(autoCommit);
        setGetGeneratedKeys(getGeneratedKeys);
    }

    public SQLiteConnectionConfig copyConfig() {
        return new SQLiteConnectionConfig(
                dateClass,
                datePrecision,
                dateStringFormat,
                transactionIsolation,
                transactionMode,
                autoCommit,
                getGeneratedKeys);
    }

    public long getDateMultiplier() {
        return datePrecision == SQLiteConfig.DatePrecision.MILLISECONDS ? 1L : 1000L;
    }

    public SQLiteConfig.DateClass getDateClass() {
        return dateClass;
    }

    public void setDateClass(SQLiteConfig.DateClass dateClass) {
        this.dateClass = dateClass;
    }

    public SQLiteConfig.DatePrecision getDatePrecision() {
        return datePrecision;
    }

    public void setDatePrecision(SQLiteConfig.DatePrecision datePrecision) {
        this.datePrecision = datePrecision;
    }

    public String getDateStringFormat() {
        return dateStringFormat;
    }

    public void setDateStringFormat(String dateStringFormat) {
        this.dateStringFormat = dateStringFormat;
        this.dateFormat = null;
    }

    /** The formatter for {@link #getDateStringFormat()}, made on first call (the driver caches them). */
    public FastDateFormat getDateFormat() {
        FastDateFormat f = dateFormat;
        if (f == null) {
            f = FastDateFormat.getInstance(dateStringFormat);
            dateFormat = f;
        }
        return f;
    }

    public boolean isAutoCommit() {
        return autoCommit;
    }

    public void setAutoCommit(boolean autoCommit) {
        this.autoCommit = autoCommit;
    }

    public int getTransactionIsolation() {
        return transactionIsolation;
    }

    public void setTransactionIsolation(int transactionIsolation) {
        this.transactionIsolation = transactionIsolation;
    }

    public SQLiteConfig.TransactionMode getTransactionMode() {
        return transactionMode;
    }

    public void setTransactionMode(SQLiteConfig.TransactionMode transactionMode) {
        this.transactionMode = transactionMode;
    }

    public boolean isGetGeneratedKeys() {
        return getGeneratedKeys;
    }

    public void setGetGeneratedKeys(boolean getGeneratedKeys) {
        this.getGeneratedKeys = getGeneratedKeys;
    }

    String transactionPrefix() {
        return BEGIN_COMMANDS.get(transactionMode);
    }
}
