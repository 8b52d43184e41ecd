package dev.fence.mcp;

import java.nio.file.Path;

/** {@code fence mcp} on a SQLite store file. */
class SqliteMcpServerTest extends McpServerTestBase {
    @Override
    protected String storeUrl(Path tmp) {
        return "sqlite:" + tmp.resolve("fence.db");
    }
}
