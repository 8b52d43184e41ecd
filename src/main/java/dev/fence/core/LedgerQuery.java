package dev.fence.core;

import java.time.Instant;
import java.util.Set;

/**
 * A filter over the ledger. Null fields match everything. Results come oldest first.
 *
 * @param resource exact resource name
 * @param repo exact repo id
 * @param ref exact full ref name
 * @param holder exact holder
 * @param since events at or after this instant
 * @param types only these event types; null or empty for all
 * @param limit at most this many events (the newest ones when more match); 0 for no limit
 * @param until events at or before this instant: with a limit, the newest ones up to it, however many came
 *     after it
 */
public record LedgerQuery(
        String resource,
        String repo,
        String ref,
        String holder,
        Instant since,
        Set<EventType> types,
        int limit,
        Instant until) {

    /** A query without an upper bound in time. */
    public LedgerQuery(
            String resource, String repo, String ref, String holder, Instant since, Set<EventType> types, int limit) {
        this(resource, repo, ref, holder, since, types, limit, null);
    }

    /** This query, up to {@code until} (null: no upper bound). */
    public LedgerQuery until(Instant until) {
        return new LedgerQuery(resource, repo, ref, holder, since, types, limit, until);
    }

    /** This query, keeping at most the newest {@code limit} events (0: all). */
    public LedgerQuery withLimit(int limit) {
        return new LedgerQuery(resource, repo, ref, holder, since, types, limit, until);
    }

    /** Matches every event. */
    public static LedgerQuery all() {
        return new LedgerQuery(null, null, null, null, null, null, 0);
    }

    /** Matches every event of one resource. */
    public static LedgerQuery forResource(String resource) {
        return new LedgerQuery(resource, null, null, null, null, null, 0);
    }

    /** True when {@code e} passes this filter (ignoring {@code limit}). */
    public boolean matches(LedgerEvent e) {
        return (resource == null || resource.equals(e.resource()))
                && (repo == null || repo.equals(e.repo()))
                && (ref == null || ref.equals(e.ref()))
                && (holder == null || holder.equals(e.holder()))
                && (since == null || !e.at().isBefore(since))
                && (until == null || !e.at().isAfter(until))
                && (types == null || types.isEmpty() || types.contains(e.type()));
    }
}
