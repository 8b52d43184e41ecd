package dev.fence.store.redis;

/**
 * The Redis keys fence uses. Scripts receive every key through {@code KEYS}, never building one, so
 * this class is the only place key names are made.
 *
 * <p>A resource's state lives in one hash whose name carries the resource as a hash tag, so a
 * resource's keys would stay in one Cluster slot if more were added. No key ever gets a TTL.
 */
final class RedisKeys {
    /** Hash: generation, floor, key (base64 proof key), createdAt (epoch ms). */
    static final String META = "fence:meta";

    /** Stream of ledger events, trimmed by age. */
    static final String LEDGER = "fence:ledger";

    /** Counter behind the ledger's sequence numbers; never trimmed. */
    static final String LEDGER_SEQ = "fence:ledger:seq";

    private RedisKeys() {}

    /**
     * Sorted set indexing the ledger by resource: stream entry ids scored by their seq, in the resource's
     * hash slot.
     */
    static String eventsOfResource(String resource) {
        return "fence:{" + resource + "}:events";
    }

    /** Sorted set indexing the ledger by repo id, as {@link #eventsOfResource}. */
    static String eventsOfRepo(String repo) {
        return "fence:repo:{" + repo + "}:events";
    }

    /** The index keys an event of {@code resource} (of {@code repo}, or null) is added to. */
    static java.util.List<String> eventIndexes(String resource, String repo) {
        return repo == null
                ? java.util.List.of(eventsOfResource(resource))
                : java.util.List.of(eventsOfResource(resource), eventsOfRepo(repo));
    }

    /**
     * Hash with a resource's counter, highest accepted token, version, latest lease, base and tip.
     * Field names are listed in {@link RedisCodec}.
     */
    static String state(String resource) {
        return "fence:{" + resource + "}:state";
    }
}
