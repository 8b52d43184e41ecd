package dev.fence.store.redis;

import dev.fence.core.EventType;
import dev.fence.core.InternalException;
import dev.fence.core.Lease;
import dev.fence.core.LedgerEvent;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.Tip;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Converts between fence's records and the strings kept in Redis. Numbers are decimal strings,
 * instants epoch milliseconds (so they keep millisecond precision only), null is an absent field.
 * The field names here and in the {@code .lua} scripts must agree.
 */
final class RedisCodec {
    // Resource state hash fields.
    static final String VERSION = "version";
    static final String COUNTER = "counter";
    static final String HIGHEST = "highest";
    static final String HOLDER = "holder";
    static final String TOKEN = "token";
    static final String GRANTED_AT = "grantedAt";
    static final String EXPIRES_AT = "expiresAt";
    static final String RELEASED = "released";
    static final String GRANT_SHA = "grantSha";
    static final String BASE_TOKEN = "baseToken";
    static final String BASE_SHA = "baseSha";
    static final String LAST_TOKEN_WRITE_SHA = "lastTokenWriteSha";
    static final String TIP_SHA = "tipSha";
    static final String TIP_TOKEN = "tipToken";
    static final String TIP_HOLDER = "tipHolder";
    static final String TIP_PUSHER = "tipPusher";
    static final String TIP_AT = "tipAt";

    static final List<String> LEASE_FIELDS = List.of(HOLDER, TOKEN, GRANTED_AT, EXPIRES_AT, RELEASED, GRANT_SHA);
    static final List<String> TIP_FIELDS = List.of(TIP_SHA, TIP_TOKEN, TIP_HOLDER, TIP_PUSHER, TIP_AT);

    // Ledger stream entry fields.
    static final String SEQ = "seq";
    static final String AT = "at";
    static final String TYPE = "type";
    static final String RESOURCE = "resource";
    static final String REPO = "repo";
    static final String REF = "ref";
    static final String PUSHER = "pusher";
    static final String OLD_SHA = "oldSha";
    static final String NEW_SHA = "newSha";
    static final String REASON = "reason";
    static final String DETAIL = "detail";

    private RedisCodec() {}

    /** A flat field/value reply ({@code HGETALL}) as a map. */
    static Map<String, String> hash(Object reply) {
        List<?> flat = list(reply);
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            map.put(string(flat.get(i)), string(flat.get(i + 1)));
        }
        return map;
    }

    static ResourceState state(String resource, Map<String, String> h) {
        return new ResourceState(
                resource,
                number(h.get(VERSION)),
                number(h.get(COUNTER)),
                number(h.get(HIGHEST)),
                lease(h),
                number(h.get(BASE_TOKEN)),
                h.get(BASE_SHA),
                h.get(LAST_TOKEN_WRITE_SHA),
                tip(h));
    }

    /** The lease in state hash {@code h}, or null when it records none. */
    static Lease lease(Map<String, String> h) {
        String holder = h.get(HOLDER);
        if (holder == null) {
            return null;
        }
        return new Lease(
                holder,
                number(h.get(TOKEN)),
                instant(h.get(GRANTED_AT)),
                instant(h.get(EXPIRES_AT)),
                "1".equals(h.get(RELEASED)),
                h.get(GRANT_SHA));
    }

    /** The tip in state hash {@code h}, or null when it records none. */
    static Tip tip(Map<String, String> h) {
        String sha = h.get(TIP_SHA);
        if (sha == null) {
            return null;
        }
        return new Tip(sha, number(h.get(TIP_TOKEN)), h.get(TIP_HOLDER), h.get(TIP_PUSHER), instant(h.get(TIP_AT)));
    }

    /**
     * The fields {@code write} sets (field/value pairs, flat) apart from counter and highest, which
     * commit.lua sets itself after checking them.
     */
    static List<String> fieldsToSet(ResourceWrite write) {
        List<String> set = new ArrayList<>();
        put(set, BASE_TOKEN, Long.toString(write.baseToken()));
        put(set, BASE_SHA, write.baseSha());
        put(set, LAST_TOKEN_WRITE_SHA, write.lastTokenWriteSha());
        Tip tip = write.tip();
        if (tip != null) {
            put(set, TIP_SHA, tip.sha());
            put(set, TIP_TOKEN, Long.toString(tip.token()));
            put(set, TIP_HOLDER, tip.holder());
            put(set, TIP_PUSHER, tip.pusher());
            put(set, TIP_AT, tip.at() == null ? null : Long.toString(tip.at().toEpochMilli()));
        }
        return set;
    }

    /** The fields {@code write} removes: those it sets to null, and the lease when it clears it. */
    static List<String> fieldsToDelete(ResourceWrite write) {
        List<String> del = new ArrayList<>();
        if (write.clearLease()) {
            del.addAll(LEASE_FIELDS);
        }
        if (write.baseSha() == null) {
            del.add(BASE_SHA);
        }
        if (write.lastTokenWriteSha() == null) {
            del.add(LAST_TOKEN_WRITE_SHA);
        }
        Tip tip = write.tip();
        if (tip == null) {
            del.addAll(TIP_FIELDS);
        } else {
            if (tip.holder() == null) {
                del.add(TIP_HOLDER);
            }
            if (tip.pusher() == null) {
                del.add(TIP_PUSHER);
            }
            if (tip.at() == null) {
                del.add(TIP_AT);
            }
        }
        return del;
    }

    /** Appends {@code event} to {@code args} as read_events in lib.lua reads it: a count, then pairs. */
    static void encodeEvent(LedgerEvent event, List<String> args) {
        Objects.requireNonNull(event.at(), "ledger event time");
        Objects.requireNonNull(event.type(), "ledger event type");
        Objects.requireNonNull(event.resource(), "ledger event resource");
        List<String> pairs = new ArrayList<>();
        put(pairs, AT, Long.toString(event.at().toEpochMilli()));
        put(pairs, TYPE, event.type().name());
        put(pairs, RESOURCE, event.resource());
        put(pairs, REPO, event.repo());
        put(pairs, REF, event.ref());
        put(pairs, HOLDER, event.holder());
        put(pairs, PUSHER, event.pusher());
        if (event.token() != 0) {
            put(pairs, TOKEN, Long.toString(event.token()));
        }
        put(pairs, OLD_SHA, event.oldSha());
        put(pairs, NEW_SHA, event.newSha());
        put(pairs, REASON, event.reason());
        put(pairs, DETAIL, event.detail());
        args.add(Integer.toString(pairs.size()));
        args.addAll(pairs);
    }

    /**
     * The event stored as stream entry fields {@code f}, or null for an event type this version of fence
     * does not know (written by a newer one).
     */
    static LedgerEvent event(Map<String, String> f) {
        EventType type;
        try {
            type = EventType.valueOf(Objects.requireNonNullElse(f.get(TYPE), ""));
        } catch (IllegalArgumentException e) {
            return null;
        }
        return new LedgerEvent(
                number(f.get(SEQ)),
                instant(f.get(AT)),
                type,
                f.get(RESOURCE),
                f.get(REPO),
                f.get(REF),
                f.get(HOLDER),
                f.get(PUSHER),
                number(f.get(TOKEN)),
                f.get(OLD_SHA),
                f.get(NEW_SHA),
                f.get(REASON),
                f.get(DETAIL));
    }

    static List<?> list(Object reply) {
        if (reply instanceof List<?> l) {
            return l;
        }
        throw new InternalException("unexpected reply from a fence script: " + reply);
    }

    static String string(Object reply) {
        if (reply == null) {
            return null;
        }
        if (reply instanceof String s) {
            return s;
        }
        if (reply instanceof Long n) {
            return n.toString();
        }
        throw new InternalException("unexpected reply from a fence script: " + reply);
    }

    static long number(Object value) {
        String s = string(value);
        if (s == null) {
            return 0;
        }
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new InternalException("Redis holds '" + s + "' where fence expects a whole number", e);
        }
    }

    static Instant instant(String millis) {
        return millis == null ? null : Instant.ofEpochMilli(number(millis));
    }

    private static void put(List<String> pairs, String field, String value) {
        if (value != null) {
            pairs.add(field);
            pairs.add(value);
        }
    }
}
