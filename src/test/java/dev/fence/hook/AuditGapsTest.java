package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.HookedRepo;
import dev.fence.testing.ProcessTest;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * "Who overwrote this branch?": a push that moves a fenced branch must be judged and recorded, or refused.
 * Real git, fence's installed hooks, pushes as a network pusher makes them (no environment of its own).
 */
@ProcessTest
class AuditGapsTest {
    @TempDir
    Path tmp;

    HookedRepo repo;
    String store;

    @BeforeEach
    void setUp() {
        store = "sqlite:" + tmp.resolve("fence.db");
        repo = HookedRepo.create(tmp, "app", store);
        HookedRepo.Clone seed = repo.clone("carol");
        seed.commit("seed");
        seed.push(List.of(), "HEAD:refs/heads/main").check();
    }

    private List<LedgerEvent> events(String resource) {
        try (LeaseStore s = Stores.open(store, StoreOptions.defaults())) {
            return s.query(new LedgerQuery(resource, null, null, null, null, null, 0));
        }
    }

    /**
     * A repository served in namespaces (git-http-backend with GIT_NAMESPACE per tenant) is often reachable
     * without one too (git daemon, an admin URL). A push there to refs/namespaces/t1/refs/heads/main writes
     * tenant t1's main, the branch fence calls git:app//t1:refs/heads/main. It must not land unjudged.
     */
    @Test
    void aPushToANamespacedBranchFromOutsideTheNamespaceIsJudgedOrRefused() {
        HookedRepo.Clone tenant = repo.clone("agent-b").env("GIT_NAMESPACE", "t1");
        String b1 = tenant.commit("tenant t1: work");
        tenant.push(List.of(), "HEAD:refs/heads/main").check();
        assertEquals(b1, repo.tip("refs/namespaces/t1/refs/heads/main"));
        assertFalse(events("git:app//t1:refs/heads/main").isEmpty(), "the tenant's own push is recorded");

        HookedRepo.Clone outsider = repo.clone("agent-x");
        outsider.git("reset", "-q", "--hard", "HEAD").check();
        String evil = outsider.commit("overwrite t1's main from outside the namespace");
        HookedRepo.Run r = outsider.push(List.of(), "+HEAD:refs/namespaces/t1/refs/heads/main");
        String tip = repo.tip("refs/namespaces/t1/refs/heads/main");
        boolean recorded = events("git:app//t1:refs/heads/main").stream().anyMatch(e -> evil.equals(e.newSha()));
        assertTrue(
                !evil.equals(tip) || recorded,
                "t1's main was rewritten to " + evil + " with no event on git:app//t1:refs/heads/main: " + r.err()
                        + "\nledger: " + events("git:app//t1:refs/heads/main"));
        // It is refused, and told where such a push belongs.
        assertEquals(b1, tip, r.err());
        assertTrue(r.err().contains("reason=namespaced-ref") && r.err().contains("GIT_NAMESPACE=t1"), r.err());
    }

    /**
     * A healthy store, and a push that waits on the repository's own record lock (held by other pushes,
     * which a pusher can start as many of as it likes): it must not be let through as if the store were
     * down, unrecorded and superseding nothing.
     */
    @Test
    void aTokenlessPushThatFindsTheRepositoryBusyIsNotAcceptedUnrecorded() throws Exception {
        HookedRepo.Clone carol = repo.clone("carol");
        String c1 = carol.commit("carol: fast-forward");
        HookedRepo.Run r;
        try (FileChannel ch = FileChannel.open(
                        repo.bare().resolve("fence/accepted.lock"),
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
                FileLock held = ch.lock()) {
            r = carol.push(List.of(), "HEAD:refs/heads/main");
        }
        boolean landed = c1.equals(repo.tip("refs/heads/main"));
        boolean recorded = events("git:app:refs/heads/main").stream().anyMatch(e -> c1.equals(e.newSha()));
        assertTrue(
                !landed || recorded,
                "main moved to " + c1 + " with no ledger event while the store was up: " + r.err());
        // Refused as a store that could not be asked in time: a busy repository is no reason to let it pass.
        assertFalse(landed, r.err());
        assertTrue(r.err().contains("reason=store-down") && r.err().contains("busy"), r.err());
    }
}
