package dev.fence.store.sqlite;

import dev.fence.core.InternalException;
import dev.fence.store.SqlScripts;
import java.util.List;
import java.util.Map;

/**
 * The SQL of the SQLite store, written as SQL in {@code schema.sql} and {@code statements.sql} (resources
 * next to this class) and compiled into {@link SqlText} by the build, so that a hook finds it in the
 * class-data archive instead of opening the jar to read a resource. Immutable once loaded; thread-safe.
 */
final class SqlResources {

    private final Map<String, String> statements;
    private final List<String> schema;

    private SqlResources(Map<String, String> statements, List<String> schema) {
        this.statements = statements;
        this.schema = schema;
    }

    /** Loads {@code statements.sql} and {@code schema.sql}, as the build compiled them into {@link SqlText}. */
    static SqlResources load() {
        return new SqlResources(SqlScripts.parseNamed(SqlText.STATEMENTS), SqlScripts.splitScript(SqlText.SCHEMA));
    }

    /** The statement called {@code name} in {@code statements.sql}. */
    String get(String name) {
        String sql = statements.get(name);
        if (sql == null) {
            throw new InternalException("statements.sql has no statement named '" + name + "'");
        }
        return sql;
    }

    /** The statements of {@code schema.sql}, in order. */
    List<String> schema() {
        return schema;
    }
}
