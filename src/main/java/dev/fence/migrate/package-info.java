/**
 * {@code fence migrate}: a small migration runner whose every change is fenced. A migration is a plain SQL
 * file {@code NNNN_name.sql}; {@link dev.fence.migrate.Migrator} applies it under a lease token, which the
 * lease store judges first ({@link dev.fence.core.FencedWrites}, the hook's token rule) and the database
 * itself judges again: one row per fenced resource in {@code fence_tokens} is claimed with {@code token <=
 * :token} in the transaction that runs the migration's DDL (PostgreSQL, SQLite), or in a transaction of its
 * own just before it (MariaDB/MySQL, whose DDL commits by itself), and every applied version records its
 * {@code applied_token} in {@code schema_migrations}.
 *
 * <p>The only place besides the SQL stores that speaks {@code java.sql}: it writes to the database being
 * migrated, the thing the fence protects, not to fence's store. It may import {@code dev.fence.core} and
 * {@code dev.fence.store} (for {@link dev.fence.store.SqlScripts}); it must not import picocli, Jackson or
 * {@code dev.fence.cli}. Drivers are reached through {@link java.sql.DriverManager} by URL, so no driver's
 * own classes are named here.
 */
package dev.fence.migrate;
