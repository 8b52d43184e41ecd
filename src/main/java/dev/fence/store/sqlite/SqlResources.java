package dev.fence.store.sqlite;

import dev.fence.core.InternalException;
import dev.fence.store.SqlScripts;
import java.util.List;

/**
 * The SQL of the SQLite store, written as SQL in {@code schema.sql} and {@code statements.sql} (resources
 * next to this class) and compiled into {@link SqlText} by the build, statement by statement, so that a
 * hook finds it in the class-data archive instead of opening the jar to read a resource, and looks a
 * statement up instead of parsing the file (which cost a hook about a millisecond interpreted; bench:
 * "Java hook, SQLite" rows). {@code SqlResourcesTest} checks that the compiled statements are those {@link
 * SqlScripts#parseNamed} reads from the file. Immutable; thread-safe.
 */
final class SqlResources {

    private volatile List<String> schema;

    private SqlResources() {}

    /** The SQL of {@code statements.sql} and {@code schema.sql}, as the build compiled them into {@link SqlText}. */
    static SqlResources load() {
        return new SqlResources();
    }

    /** The statement called {@code name} in {@code statements.sql}. */
    String get(String name) {
        String[] names = SqlText.STATEMENT_NAMES;
        for (int i = 0; i < names.length; i++) {
            if (names[i].equals(name)) {
                return SqlText.STATEMENT_SQL[i];
            }
        }
        throw new InternalException("statements.sql has no statement named '" + name + "'");
    }

    /** The statements of {@code schema.sql}, in order (read when a store is created or checked). */
    List<String> schema() {
        List<String> s = schema;
        if (s == null) {
            s = SqlScripts.splitScript(SqlText.SCHEMA);
            schema = s;
        }
        return s;
    }
}
