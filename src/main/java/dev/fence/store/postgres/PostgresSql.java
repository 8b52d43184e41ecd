package dev.fence.store.postgres;

import dev.fence.core.InternalException;
import dev.fence.store.JarResources;
import dev.fence.store.SqlScripts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The SQL of the PostgreSQL store, read from {@code schema.sql}, {@code statements.sql} and {@code
 * functions.sql} (resources next to this class). In {@code statements.sql} a statement may include another
 * as {@code {name}}. Immutable; thread-safe.
 */
final class PostgresSql {
    private static final Pattern INCLUDE = Pattern.compile("\\{([a-z_.]+)}");
    private static final String DIR = "dev/fence/store/postgres/";

    /** Loaded on first use. */
    static final PostgresSql SQL = load();

    private final Map<String, String> statements;
    private final List<String> schema;
    private final List<String> functions;

    private PostgresSql(Map<String, String> statements, List<String> schema, List<String> functions) {
        this.statements = statements;
        this.schema = schema;
        this.functions = functions;
    }

    private static PostgresSql load() {
        Map<String, String> functions = SqlScripts.parseNamed(read("functions.sql"));
        return new PostgresSql(
                includeAll(SqlScripts.parseNamed(read("statements.sql"))),
                SqlScripts.splitScript(read("schema.sql")),
                // In name order: each is created on its own, and a function's body is resolved when it runs.
                new TreeMap<>(functions).values().stream().toList());
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

    /** The {@code CREATE OR REPLACE FUNCTION} statements of {@code functions.sql}. */
    List<String> functions() {
        return functions;
    }

    private static String read(String name) {
        try {
            byte[] bytes = JarResources.read(PostgresSql.class, DIR + name);
            if (bytes == null) {
                throw new InternalException("the fence jar lacks " + DIR + name);
            }
            return new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new InternalException("cannot read " + DIR + name + ": " + e.getMessage(), e);
        }
    }

    /** Replaces every {@code {name}} by that statement, which may include others in turn (never itself). */
    static Map<String, String> includeAll(Map<String, String> named) {
        Map<String, String> out = new HashMap<>();
        for (String name : named.keySet()) {
            out.put(name, expand(named, name, new ArrayList<>()));
        }
        return Map.copyOf(out);
    }

    private static String expand(Map<String, String> named, String name, List<String> path) {
        if (path.contains(name)) {
            throw new InternalException("statements.sql includes '" + name + "' in itself: " + path);
        }
        String sql = named.get(name);
        if (sql == null) {
            throw new InternalException("statements.sql includes '" + name + "', which it does not define");
        }
        path.add(name);
        Matcher m = INCLUDE.matcher(sql);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, Matcher.quoteReplacement(expand(named, m.group(1), path)));
        }
        m.appendTail(sb);
        path.remove(path.size() - 1);
        return sb.toString();
    }
}
