package dev.fence.store.sqlite;

import dev.fence.core.InternalException;
import dev.fence.store.SqlScripts;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The SQL of the SQLite store, written as SQL in {@code schema.sql} and {@code statements.sql} (resources
 * next to this class) and compiled into {@link SqlText} by the build, so that a hook finds it in the
 * class-data archive instead of opening the jar to read a resource. Each statement is read out of the text
 * when first asked for: a hook process runs a few of them, and reading them all cost it a millisecond
 * (bench: "Java hook, SQLite" rows). {@code SqlResourcesTest} checks that every statement reads as {@link
 * SqlScripts#parseNamed} reads the whole file. Thread-safe.
 */
final class SqlResources {

    private final ConcurrentHashMap<String, String> statements = new ConcurrentHashMap<>();
    private volatile List<String> schema;

    private SqlResources() {}

    /** The SQL of {@code statements.sql} and {@code schema.sql}, as the build compiled them into {@link SqlText}. */
    static SqlResources load() {
        return new SqlResources();
    }

    /** The statement called {@code name} in {@code statements.sql}. */
    String get(String name) {
        String sql = statements.get(name);
        if (sql == null) {
            sql = SqlScripts.named(SqlText.STATEMENTS, name);
            if (sql == null) {
                throw new InternalException("statements.sql has no statement named '" + name + "'");
            }
            statements.put(name, sql);
        }
        return sql;
    }

    /** The statements of {@code schema.sql}, in order. */
    List<String> schema() {
        List<String> s = schema;
        if (s == null) {
            s = SqlScripts.splitScript(SqlText.SCHEMA);
            schema = s;
        }
        return s;
    }
}
