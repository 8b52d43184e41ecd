package dev.fence.faults;

import java.util.Locale;
import java.util.Optional;

/** The faults {@code fence faults} injects, by the names its {@code --fault} option takes. */
public enum Fault {
    REDIS_KILL_NOPERSIST(
            "kill -9 a Redis without persistence (save \"\", appendonly no) mid-load; restart it empty on the same"
                    + " port"),
    REDIS_KILL_RDB("snapshot-only Redis (appendonly no, a save rule): BGSAVE, grants and pushes after the snapshot,"
            + " kill -9, restart from the snapshot"),
    REDIS_DEBUG_RELOAD("snapshot-only Redis: SAVE, the snapshot copied aside, grants and pushes after it, the copy put"
            + " back in place and DEBUG RELOAD NOSAVE: the data rolls back while the run id and the replication id"
            + " stay, so no new generation is seen"),
    REDIS_KILL_AOF_EVERYSEC("Redis with appendonly yes, appendfsync everysec: kill -9 mid-load, restart from the AOF"),
    REDIS_KILL_AOF_ALWAYS("Redis with appendonly yes, appendfsync always: kill -9 mid-load, restart from the AOF"),
    REDIS_PROMOTE_LAGGING_REPLICA("a master with one replica; the replica's link is cut (it lags), grants and pushes"
            + " go on, the master is killed -9, the replica is promoted (REPLICAOF NO ONE) and the clients and the"
            + " hook's store switch to it"),
    REDIS_PROMOTE_LAGGING_REPLICA_WAIT1("the same with ?wait=1 and two replicas: the one promoted lags while the other"
            + " acknowledges every write"),
    REDIS_EVICTION("under load, CONFIG SET maxmemory-policy allkeys-random and a small maxmemory while a filler"
            + " writes; the long-running clients checked the policy when it was still noeviction"),
    REDIS_EVICTION_WINDOW("for a moment under load, CONFIG SET maxmemory-policy allkeys-random and a small maxmemory"
            + " while a filler writes, until a resource's state is evicted; then back to noeviction, so the clients"
            + " go on against a store that lost that state in the same generation"),
    CLIENT_CLOCK_SLOW("one client's clock is one hour behind; the Redis (no persistence) is killed -9 and comes back"
            + " empty, and that client is the first to touch it"),
    POSTGRES_PROMOTE("a PostgreSQL primary with a synchronous standby: the primary's postmaster and backends are"
            + " killed -9 mid-load, the standby is promoted (pg_ctl promote) and the clients and the hook's store"
            + " switch to it"),
    POSTGRES_PROMOTE_ASYNC("the same with an asynchronous standby, cut off from the primary before the kill, so"
            + " acknowledged grants are lost: the new timeline must start a new generation");

    private final String description;

    Fault(String description) {
        this.description = description;
    }

    /** The name {@code --fault} takes: {@code redis-kill-rdb}, ... */
    public String id() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** What the fault does, for help and the report. */
    public String description() {
        return description;
    }

    /** The fault named {@code id}, if any. */
    public static Optional<Fault> byId(String id) {
        for (Fault f : values()) {
            if (f.id().equals(id)) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }
}
