package dev.fence.core;

import java.util.List;

/**
 * The events a ledger query answered, oldest first, and whether more matched than its limit let through.
 *
 * @param events the newest events that fit the query's limit, oldest first
 * @param truncated true when more events matched than {@code events} holds: older ones were left out
 */
public record LedgerAnswer(List<LedgerEvent> events, boolean truncated) {
    public LedgerAnswer {
        events = List.copyOf(events);
    }

    /**
     * The query to ask a store for, to tell "exactly {@code query.limit()} matched" from "more matched":
     * one event more than the limit (the query itself when it has no limit).
     */
    public static LedgerQuery probe(LedgerQuery query) {
        if (query.limit() <= 0 || query.limit() == Integer.MAX_VALUE) {
            return query;
        }
        return query.withLimit(query.limit() + 1);
    }

    /**
     * The answer to {@code query} from what {@link #probe(LedgerQuery)} read, oldest first: the newest
     * {@code query.limit()} of them, truncated when there were more.
     */
    public static LedgerAnswer of(LedgerQuery query, List<LedgerEvent> read) {
        int limit = query.limit();
        if (limit <= 0 || read.size() <= limit) {
            return new LedgerAnswer(read, false);
        }
        return new LedgerAnswer(read.subList(read.size() - limit, read.size()), true);
    }
}
