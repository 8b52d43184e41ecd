package dev.fence.client;

import dev.fence.core.Lease;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService.Status;
import dev.fence.core.LeaseStanding;
import dev.fence.core.LedgerEvent;
import dev.fence.core.ObjectIds;
import dev.fence.core.Printable;
import dev.fence.core.Reason;
import dev.fence.core.ResourceState;
import dev.fence.core.Resources;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a holder holds, for {@code fence status}: every resource the ledger says it was granted, and for
 * each whether it still holds it. {@link #promptLines} words it as short dated sentences for putting
 * back into an agent's context after a compaction, where "I hold X" claims must not survive unchecked.
 */
public final class HolderStatus {
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("HH:mm:ss'Z'").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter DATE_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'").withZone(ZoneOffset.UTC);

    private HolderStatus() {}

    /** Where the holder stands on one resource. */
    public enum State {
        /** Holds it: live lease, current token. */
        HELD,
        /** Its lease ran out, but no one has taken the resource since: renewing still works. */
        LAPSED,
        /** It released its lease. */
        RELEASED,
        /** A newer token was granted (or a tokenless push bumped the counter). */
        SUPERSEDED,
        /** The store started a new generation (lost or rolled back data) after its grant: void. */
        VOID
    }

    /**
     * One resource.
     *
     * @param token the holder's latest token there
     * @param current the resource's latest granted token
     * @param currentHolder the holder of the latest grant, or null after a bump
     * @param currentLive the latest grant is live
     * @param expiresAt the holder's lease expiry (HELD, LAPSED) or release time (RELEASED), else null
     * @param grantSha the holder's recorded remote SHA (HELD, LAPSED), or null
     */
    public record Entry(
            String resource,
            State state,
            long token,
            long current,
            String currentHolder,
            boolean currentLive,
            Instant expiresAt,
            String grantSha) {}

    /** The whole answer, read at {@code at}. */
    public record Report(String holder, Instant at, List<Entry> entries) {}

    /**
     * Reads the holder's standing on every resource it was granted since {@code since}.
     *
     * @param since only grants at or after this instant, or null for all the ledger keeps
     */
    public static Report of(LeaseOperations leases, Clock clock, String holder, Instant since) {
        Map<String, Long> lastTokens = new LinkedHashMap<>();
        for (LedgerEvent e : leases.grantsTo(holder, null, since, 0)) {
            lastTokens.merge(e.resource(), e.token(), Math::max);
        }
        Instant at = clock.instant();
        List<Entry> entries = new ArrayList<>();
        for (var e : lastTokens.entrySet()) {
            Status status = leases.status(e.getKey());
            at = status.at();
            entries.add(entry(status, holder, e.getValue()));
        }
        entries.sort(Comparator.comparing((Entry x) -> x.state().ordinal()).thenComparing(Entry::resource));
        return new Report(holder, at, List.copyOf(entries));
    }

    static Entry entry(Status status, String holder, long lastToken) {
        ResourceState s = status.state();
        Lease lease = s.lease();
        boolean leaseIsLatest = lease != null && lease.token() == s.latestGranted() && !status.leaseVoid();
        String currentHolder = leaseIsLatest ? lease.holder() : null;
        boolean currentLive = leaseIsLatest && lease.isLive(status.at());
        LeaseStanding standing = LeaseStanding.of(s, holder, lastToken, status.floor());
        if (standing instanceof LeaseStanding.Holds h) {
            State state = h.lapsed(status.at()) ? State.LAPSED : State.HELD;
            return new Entry(
                    s.resource(),
                    state,
                    h.lease().token(),
                    s.latestGranted(),
                    holder,
                    currentLive,
                    h.lease().expiresAt(),
                    h.lease().grantSha());
        }
        LeaseStanding.NotHeld n = (LeaseStanding.NotHeld) standing;
        if (n.fenced().reason() == Reason.OLD_GENERATION) {
            return new Entry(s.resource(), State.VOID, n.lastToken(), s.latestGranted(), null, false, null, null);
        }
        if (n.fenced().reason() == Reason.RELEASED) {
            return new Entry(
                    s.resource(),
                    State.RELEASED,
                    n.lastToken(),
                    s.latestGranted(),
                    holder,
                    false,
                    lease.expiresAt(),
                    null);
        }
        return new Entry(
                s.resource(),
                State.SUPERSEDED,
                n.lastToken(),
                s.latestGranted(),
                currentHolder,
                currentLive,
                null,
                null);
    }

    /** Short sentences, one per resource, each starting "as of HH:MM:SSZ". */
    public static List<String> promptLines(Report r) {
        String asOf = "as of " + TIME.format(r.at().truncatedTo(ChronoUnit.SECONDS));
        List<String> out = new ArrayList<>();
        if (r.entries().isEmpty()) {
            out.add(asOf + " you (" + r.holder() + ") hold no leases.");
            return out;
        }
        for (Entry e : r.entries()) {
            out.add(asOf + " " + sentence(e, r.at()));
        }
        return out;
    }

    private static String sentence(Entry e, Instant at) {
        return switch (e.state()) {
            case HELD -> "you hold " + Printable.name(e.resource()) + " with token " + e.token() + " until "
                    + when(e.expiresAt(), at) + expected(e) + ".";
            case LAPSED -> "your lease on " + Printable.name(e.resource()) + " (token " + e.token() + ") ran out at "
                    + when(e.expiresAt(), at) + " and no one has taken it since; renew it before you write"
                    + expected(e) + ".";
            case RELEASED -> "you hold no lease on " + Printable.name(e.resource()) + "; you released token "
                    + e.token() + " at " + when(e.expiresAt(), at) + ".";
            case SUPERSEDED -> "you hold no lease on " + Printable.name(e.resource()) + "; your last token there was "
                    + e.token() + ", superseded by " + e.current() + " (" + successor(e) + ").";
            case VOID -> "you hold no lease on " + Printable.name(e.resource()) + "; your token " + e.token()
                    + " is void: the lease store lost or rolled back its data and started a new generation"
                    + " since. Re-read the resource and acquire again before you write.";
        };
    }

    private static String successor(Entry e) {
        if (e.currentHolder() == null) {
            return "a push without a token";
        }
        return (e.currentLive() ? "held by " : "granted to ")
                + Printable.name(e.currentHolder())
                + (e.currentLive() ? "" : ", since lapsed");
    }

    private static String expected(Entry e) {
        if (e.grantSha() == null || Resources.parse(e.resource()).isEmpty()) {
            return "";
        }
        return ObjectIds.isZero(e.grantSha())
                ? "; fence push expects the branch not to exist yet"
                : "; fence push expects the remote at " + ObjectIds.abbreviate(e.grantSha());
    }

    private static String when(Instant t, Instant at) {
        if (t == null) {
            return "an unknown time";
        }
        Instant s = t.truncatedTo(ChronoUnit.SECONDS);
        boolean sameDay = s.truncatedTo(ChronoUnit.DAYS).equals(at.truncatedTo(ChronoUnit.DAYS));
        return (sameDay ? TIME : DATE_TIME).format(s);
    }
}
