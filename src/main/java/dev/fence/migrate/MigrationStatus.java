package dev.fence.migrate;

import java.util.List;

/**
 * What {@code fence migrate status} reads: the database's fence row and every version, from the files and
 * from {@code schema_migrations}.
 *
 * @param db the database, password masked
 * @param dir the migrations directory
 * @param resource the resource that fences the database: the one asked about, unless the database's fence
 *     row is another's (a database is fenced by one resource), then that one
 * @param fenceToken the token in the resource's fence row: the newest that has written (0 for none)
 * @param flyway true when the database has {@code flyway_schema_history}, which fence refuses to migrate
 * @param entries every version, in version order
 */
public record MigrationStatus(
        String db, String dir, String resource, long fenceToken, boolean flyway, List<Entry> entries) {

    /**
     * One version.
     *
     * @param version as the file (or, for a version with no file, the table) spells it
     * @param file the file name, or null when the version is applied but has no file in the directory
     * @param applied true when {@code schema_migrations} has it
     * @param appliedToken the token it was applied under, or null (not applied, or by another tool)
     * @param appliedHolder the holder it was applied by, or null
     */
    public record Entry(String version, String file, boolean applied, Long appliedToken, String appliedHolder) {}

    /** The entries not applied yet. */
    public List<Entry> pending() {
        return entries.stream().filter(e -> !e.applied()).toList();
    }
}
