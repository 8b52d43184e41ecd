package dev.fence.mcp;

import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

/** The in-process tools of the MCP tests: holder agent-a, repository app, remote origin, a 5-minute TTL. */
final class TestTools {
    private TestTools() {}

    /**
     * Tools in direct mode on {@code store}, for a clone at {@code clone}.
     *
     * @param grants the grants directory ({@code --grants}), or null for none
     */
    static FenceTools agentA(LeaseStore store, Clock clock, Path clone, Path grants) {
        return new FenceTools(
                new LeaseService(store, clock),
                new FenceTools.Settings(
                        "agent-a",
                        "app",
                        clone,
                        "origin",
                        Duration.ofMinutes(5),
                        Map.of("PATH", System.getenv("PATH")),
                        clock,
                        grants));
    }
}
