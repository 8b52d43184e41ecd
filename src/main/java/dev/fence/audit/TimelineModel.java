package dev.fence.audit;

import dev.fence.core.EventType;
import dev.fence.core.LedgerEvent;
import dev.fence.core.Reason;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the timeline page draws, worked out from ledger events alone: per resource, one lane per holder,
 * one bar per lease, one mark per push. Nothing here knows about pixels.
 *
 * <p>A lease bar runs from its grant to the first of: its release, its expiry (the ledger dates an
 * {@link EventType#EXPIRE} at the lapse itself), the next grant or bump on the resource (supersession),
 * or the end of the window. Between an expiry and the supersession that followed it the lease had lapsed
 * while nobody else held the resource: that stretch is the bar's lapsed part.
 *
 * <p>A lease its holder renewed after it had lapsed, before anyone superseded it, is two bars: the first
 * held until its expiry and lapsed until the {@link EventType#RENEW} (ending {@link End#RENEWED}), the
 * second held from the renewal on, so a push made under it after the renewal falls in a held stretch.
 *
 * <p>Events about the store itself ({@link EventType#RETENTION}) belong to no resource and get no lane.
 */
final class TimelineModel {
    /** The lane of pushes made without a token (humans, CI, web-UI merges): bumped, allowed or refused. */
    static final String TOKENLESS = "(tokenless)";

    /**
     * The lane of pushes that carried a token without a valid proof: the ledger names no holder for them,
     * because a token number proves nothing about who holds it.
     */
    static final String UNPROVEN = "(unproven token)";

    /** How a lease bar ends. */
    enum End {
        RELEASED,
        EXPIRED,
        SUPERSEDED,
        /**
         * Expired, then renewed by its holder before anyone superseded it: the bar's lapsed part ends at the
         * renewal, where the same lease's next bar starts.
         */
        RENEWED,
        /** Still held, or lapsed unobserved, when the window ends. */
        OPEN;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * One lease.
     *
     * @param from the grant (or the window's start when the grant is before it)
     * @param heldUntil when it stopped being held: released, expired, superseded or the window's end
     * @param to the end of the bar: {@code heldUntil}, or the supersession or renewal after an expiry
     */
    record Bar(String holder, long token, Instant from, Instant heldUntil, Instant to, End end) {
        boolean lapsed() {
            return to.isAfter(heldUntil);
        }
    }

    /** One push event and the lane it is drawn on. */
    record Mark(LedgerEvent event, String lane, String kind) {}

    /** One resource's lanes (in order), bars and marks (in time order). */
    record Resource(String name, List<String> lanes, List<Bar> bars, List<Mark> marks) {}

    private TimelineModel() {}

    /**
     * Groups {@code events} by resource (in order of each resource's first event) and works out lanes,
     * bars and marks.
     *
     * @param start the window's start: bars of leases granted before it start here
     * @param end the window's end: leases still open end here
     */
    static List<Resource> build(List<LedgerEvent> events, Instant start, Instant end) {
        Map<String, List<LedgerEvent>> byResource = new LinkedHashMap<>();
        for (LedgerEvent e : sorted(events)) {
            if (e.type() == EventType.RETENTION) {
                continue; // about the store, not a resource: a row of the table, no lane
            }
            byResource.computeIfAbsent(e.resource(), r -> new ArrayList<>()).add(e);
        }
        List<Resource> out = new ArrayList<>();
        byResource.forEach((name, list) -> out.add(resource(name, list, start, end)));
        return out;
    }

    /** Oldest first; the store's sequence breaks ties (an expiry is appended just before its successor). */
    static List<LedgerEvent> sorted(List<LedgerEvent> events) {
        List<LedgerEvent> copy = new ArrayList<>(events);
        copy.sort(Comparator.comparing(LedgerEvent::at).thenComparingLong(LedgerEvent::seq));
        return copy;
    }

    private static Resource resource(String name, List<LedgerEvent> events, Instant start, Instant end) {
        Set<String> holders = new LinkedHashSet<>();
        Set<String> special = new LinkedHashSet<>();
        List<Mark> marks = new ArrayList<>();
        List<Bar> bars = new ArrayList<>();
        // The resource's one lease at a time that has not ended yet (held, or lapsed and not yet superseded).
        Open open = null;
        // A bump whose update did not land superseded nothing (Landings): its lease bar goes on. Each
        // unlanded event settles one bump, the latest earlier one of the same update and pusher not yet
        // settled; a later bump of the same old..new (pushed again, and landed) still supersedes.
        Set<LedgerEvent> unlandedBumps = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        List<LedgerEvent> bumpsSoFar = new ArrayList<>();
        for (LedgerEvent e : events) {
            if (e.type() == EventType.BUMP) {
                bumpsSoFar.add(e);
            } else if (e.type() == EventType.UNLANDED && "bumped".equals(e.reason())) {
                for (int i = bumpsSoFar.size() - 1; i >= 0; i--) {
                    LedgerEvent b = bumpsSoFar.get(i);
                    if (java.util.Objects.equals(b.oldSha(), e.oldSha())
                            && java.util.Objects.equals(b.newSha(), e.newSha())
                            && java.util.Objects.equals(b.pusher(), e.pusher())) {
                        unlandedBumps.add(b);
                        bumpsSoFar.remove(i);
                        break;
                    }
                }
            }
        }
        Map<String, String> grantedTo = grantedTo(events);
        for (LedgerEvent e : events) {
            switch (e.type()) {
                case GRANT -> {
                    if (open != null) {
                        bars.add(open.close(e.at(), End.SUPERSEDED));
                    }
                    holders.add(e.holder());
                    open = new Open(e.holder(), e.token(), e.at());
                }
                case RELEASE, EXPIRE -> {
                    End how = e.type() == EventType.RELEASE ? End.RELEASED : End.EXPIRED;
                    if (open == null || open.token != e.token()) {
                        // Granted before the window (or before retention dropped the grant).
                        if (open != null) {
                            bars.add(open.close(e.at(), End.SUPERSEDED));
                        }
                        holders.add(e.holder());
                        open = new Open(e.holder(), e.token(), start.isAfter(e.at()) ? e.at() : start);
                    }
                    open.stop(e.at(), how);
                    if (how == End.RELEASED) {
                        bars.add(open.close(e.at(), how));
                        open = null;
                    }
                }
                case RENEW -> {
                    if (open == null || open.token != e.token()) {
                        // Its expiry is before the window (or retention dropped it): lapsed from the start.
                        if (open != null) {
                            bars.add(open.close(e.at(), End.SUPERSEDED));
                        }
                        holders.add(e.holder());
                        Instant from = start.isAfter(e.at()) ? e.at() : start;
                        open = new Open(e.holder(), e.token(), from);
                        open.stop(from, End.EXPIRED);
                    }
                    if (open.how == End.EXPIRED) {
                        bars.add(open.renewed(e.at()));
                        open = new Open(e.holder(), e.token(), e.at());
                    }
                }
                case BUMP -> {
                    if (open != null && !unlandedBumps.contains(e)) {
                        bars.add(open.close(e.at(), End.SUPERSEDED));
                        open = null;
                    }
                }
                default -> {}
            }
            if (isPush(e.type())) {
                String lane = lane(e, grantedTo);
                (lane.equals(e.holder()) ? holders : special).add(lane);
                marks.add(new Mark(e, lane, kind(e)));
            }
        }
        if (open != null) {
            bars.add(open.close(open.stoppedAt != null ? open.stoppedAt : later(end, open.from), End.OPEN));
        }
        List<String> lanes = new ArrayList<>(holders);
        if (special.contains(UNPROVEN)) {
            lanes.add(UNPROVEN);
        }
        if (special.contains(TOKENLESS)) {
            lanes.add(TOKENLESS);
        }
        return new Resource(name, lanes, bars, marks);
    }

    private static Instant later(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }

    /** A lease being followed through the events. */
    private static final class Open {
        final String holder;
        final long token;
        final Instant from;
        Instant stoppedAt;
        End how;

        Open(String holder, long token, Instant from) {
            this.holder = holder;
            this.token = token;
            this.from = from;
        }

        void stop(Instant at, End end) {
            if (stoppedAt == null) {
                stoppedAt = at;
                how = end;
            }
        }

        /** The bar of a lease that had expired, lapsed until its renewal {@code at}. */
        Bar renewed(Instant at) {
            return new Bar(holder, token, from, stoppedAt, later(at, stoppedAt), End.RENEWED);
        }

        /** The bar, ending at {@code at}; a lease that had stopped already keeps how it stopped. */
        Bar close(Instant at, End end) {
            if (stoppedAt != null) {
                return new Bar(holder, token, from, stoppedAt, later(at, stoppedAt), how);
            }
            return new Bar(holder, token, from, at, at, end);
        }
    }

    static boolean isPush(EventType t) {
        return switch (t) {
            case ACCEPT, BUMP, ALLOW, REJECT, LANDED, UNLANDED -> true;
            case GRANT, RELEASE, EXPIRE, RENEW, RETENTION -> false;
        };
    }

    /**
     * The lane a push is drawn on: the holder the ledger names for it; tokenless pushes (bumped, allowed,
     * or refused for want of a token, and the landings of bumped and allowed pushes, whose token is the
     * bump's) on {@link #TOKENLESS}; the landing of an accepted push recorded without its holder on the
     * holder {@code grantedTo} names for its token; any other token with no proven holder on {@link
     * #UNPROVEN}.
     */
    static String lane(LedgerEvent e, Map<String, String> grantedTo) {
        if (e.holder() != null && !e.holder().isEmpty()) {
            return e.holder();
        }
        if (e.type() == EventType.BUMP
                || e.type() == EventType.ALLOW
                || e.token() == 0
                || Reason.BUMPED.code().equals(e.reason())
                || Reason.ALLOWED.code().equals(e.reason())) {
            return TOKENLESS;
        }
        String holder = (e.type() == EventType.LANDED || e.type() == EventType.UNLANDED)
                        && Reason.ACCEPTED.code().equals(e.reason())
                ? grantedTo.get(e.resource() + "\n" + e.token())
                : null;
        return holder != null ? holder : UNPROVEN;
    }

    /**
     * Who each token of {@code events} was granted to, by resource and token ({@link #lane}): a landing
     * recorded without its holder (fence serve's post-receive knows only the token) is drawn on the holder
     * the token's grant names.
     */
    static Map<String, String> grantedTo(List<LedgerEvent> events) {
        Map<String, String> out = new HashMap<>();
        for (LedgerEvent e : events) {
            if (e.type() == EventType.GRANT && e.holder() != null) {
                out.put(e.resource() + "\n" + e.token(), e.holder());
            }
        }
        return out;
    }

    /**
     * The kind an event is drawn and filtered as: the event type's label, except that a refused push is
     * {@code fenced} or {@code rejected} as its FENCED line says.
     */
    static String kind(LedgerEvent e) {
        if (e.type() == EventType.REJECT) {
            return AuditFormat.verdictWord(e.reason()).equals("FENCED") ? "fenced" : "rejected";
        }
        return e.type().label();
    }
}
