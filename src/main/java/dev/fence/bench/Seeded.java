package dev.fence.bench;

import dev.fence.core.Resources;

/**
 * The names and shapes of what the scale bench seeds, in one place: every seeder writes them, and the
 * ledger queries ask for them. Lease {@code k} (1-based) is on branch {@code lease-k} of repository
 * {@code scale-(k % 100)}, held by {@code agent-k}. Ledger event {@code j} is about lease {@code (j %
 * 100,000) + 1}, alternately a grant and an accepted push, so that a repository holds 1 % of the ledger and
 * a resource one event in 100,000.
 */
final class Seeded {
    /** Repositories the seeded branches are spread over. */
    static final int REPOS = 100;

    /** Resources the seeded events are spread over. */
    static final int EVENT_RESOURCES = 100_000;

    /** How long the seeded leases last: longer than any run. */
    static final long LEASE_MILLIS = 6 * 3_600_000L;

    private Seeded() {}

    static String repo(long k) {
        return "scale-" + (k % REPOS);
    }

    static String ref(long k) {
        return "refs/heads/lease-" + k;
    }

    static String resource(long k) {
        return Resources.forRef(repo(k), ref(k));
    }

    static String holder(long k) {
        return "agent-" + k;
    }

    /** The lease event {@code j} is about. */
    static long leaseOfEvent(long j) {
        return (j % EVENT_RESOURCES) + 1;
    }

    /** The repository whose events the "audit --repo" row asks for. */
    static String queriedRepo() {
        return repo(7);
    }

    /** The resource whose timeline the "audit timeline" row asks for. */
    static String queriedResource() {
        return resource(107);
    }
}
