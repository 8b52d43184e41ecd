package dev.fence.core;

import java.time.Duration;
import java.time.Instant;

/**
 * One entry of the audit ledger. Events are never changed once appended; a store may drop the oldest
 * ones past its retention, never counters or highest-accepted tokens.
 *
 * @param seq the store's sequence number, increasing in append order; 0 before it is appended
 * @param at when it happened (the clock of the process that recorded it)
 * @param type what happened
 * @param resource the resource
 * @param repo the repo id for git resources, else null
 * @param ref the full ref name for git resources, else null
 * @param holder the lease holder involved, or null
 * @param pusher the git host's pusher identity for push events, or null
 * @param token the token involved, or 0
 * @param oldSha the ref's old id for push events, or null
 * @param newSha the ref's new id for push events, or null
 * @param reason a machine reason code ({@code stale-token}, …) for rejections and bumps, or null
 * @param detail a short human note, or null; never contains a proof
 */
public record LedgerEvent(
        long seq,
        Instant at,
        EventType type,
        String resource,
        String repo,
        String ref,
        String holder,
        String pusher,
        long token,
        String oldSha,
        String newSha,
        String reason,
        String detail) {

    /**
     * The resource that events about the store itself ({@link EventType#RETENTION}) are filed under: no
     * lease or push is about it, and the parentheses set it apart from the names of git resources.
     */
    public static final String STORE_RESOURCE = "(store)";

    /**
     * A change of the store's ledger retention from {@code from} to {@code to} by {@code by}, at {@code at}
     * (the store's clock).
     */
    public static LedgerEvent retention(Instant at, String by, Duration from, Duration to) {
        return new LedgerEvent(
                0,
                at,
                EventType.RETENTION,
                STORE_RESOURCE,
                null,
                null,
                null,
                by,
                0,
                null,
                null,
                null,
                "ledger retention " + Durations.format(from) + " -> " + Durations.format(to));
    }

    /** A lease event on {@code resource}, with repo and ref filled in for git resources. */
    public static LedgerEvent lease(Instant at, EventType type, String resource, String holder, long token) {
        Resources.GitRef git = Resources.parse(resource).orElse(null);
        return new LedgerEvent(
                0,
                at,
                type,
                resource,
                git == null ? null : git.repoId(),
                git == null ? null : git.ref(),
                holder,
                null,
                token,
                null,
                null,
                null,
                null);
    }

    /** A copy carrying the sequence number the store assigned. */
    public LedgerEvent withSeq(long newSeq) {
        return new LedgerEvent(
                newSeq, at, type, resource, repo, ref, holder, pusher, token, oldSha, newSha, reason, detail);
    }
}
