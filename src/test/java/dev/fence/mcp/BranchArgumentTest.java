package dev.fence.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.LeaseStore;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spellings a model tries for {@code branch}, on a real SQLite lease store: each names a branch of the
 * server's repository as git would, or is refused naming the argument; none reaches another ref.
 */
class BranchArgumentTest {
    @TempDir
    Path tmp;

    LeaseStore store;
    FenceTools tools;

    @BeforeEach
    void setUp() {
        FakeClock clock = new FakeClock(Instant.parse("2026-12-01T14:26:10Z"));
        store = Stores.open(
                "sqlite:" + tmp.resolve("store.db"), StoreOptions.defaults().withCallerClock());
        tools = TestTools.agentA(store, clock, tmp, null);
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void mainAndRefsHeadsMainAreOneResource() {
        for (String b : List.of("main", "refs/heads/main")) {
            ToolResult r = tools.call("lease_status", Map.of("branch", b));
            assertFalse(r.error(), r.text());
            assertEquals("git:app:refs/heads/main", r.structured().get("resource"), b);
        }
    }

    @Test
    void namesGitWouldNotTakeAsABranchOrThatLookLikeAnotherAreRefused() {
        for (String b : List.of(
                "HEAD",
                "refs/heads/HEAD",
                "-f",
                "refs/heads/-f",
                "refs/heads/../main",
                "main/",
                "refs/remotes/origin/main",
                "refs/tags/v1",
                "refs/heads/main.lock",
                "main\u200b",
                "\u202emain",
                "ma\u00adin",
                "main\ufeff",
                "main\u00a0")) {
            ToolResult r = tools.call("lease_status", Map.of("branch", b));
            assertTrue(r.error(), b + ": " + r.text());
            assertEquals("invalid", r.structured().get("error"), b);
            assertEquals("branch", r.structured().get("argument"), b);
        }
    }
}
