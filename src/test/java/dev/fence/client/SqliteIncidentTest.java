package dev.fence.client;

import java.nio.file.Path;

/** The incident against a SQLite store file. */
class SqliteIncidentTest extends IncidentTestBase {
    @Override
    protected String storeUrl(Path tmp) {
        return "sqlite:" + tmp.resolve("store").resolve("fence.db");
    }
}
