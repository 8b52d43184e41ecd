package dev.fence.doctor;

import dev.fence.store.StoreSetup;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Judges a Redis server's set-up: its role, eviction policy, persistence and replicas. */
final class RedisJudge {
    private RedisJudge() {}

    static List<Finding> judge(StoreSetup.Redis r) {
        List<Finding> out = new ArrayList<>();
        out.add(role(r));
        out.add(eviction(r));
        out.add(persistence(r));
        out.add(replicas(r));
        return out;
    }

    private static Finding role(StoreSetup.Redis r) {
        String version = r.info("redis_version").map(v -> " (Redis " + v + ")").orElse("");
        String via = r.viaSentinel() ? ", the master the sentinels name" : "";
        Optional<String> role = r.info("role");
        if (role.isEmpty()) {
            return Finding.warn(
                    StoreChecks.ROLE,
                    r.server() + " did not answer INFO: whether it is a master is unknown",
                    "allow fence's Redis user the INFO command (+info), or check 'INFO replication' by hand");
        }
        if (!role.get().equals("master")) {
            return Finding.fail(
                    StoreChecks.ROLE,
                    r.server() + via + " is a " + role.get()
                            + r.info("master_host")
                                    .map(h -> " of " + h + ":"
                                            + r.info("master_port").orElse("?"))
                                    .orElse("")
                            + version + ": it refuses fence's writes",
                    r.viaSentinel()
                            ? "the sentinels name a replica as master: check 'SENTINEL masters' and the replicas' links"
                            : "point the store URL at the master, or use redis-sentinel://… to follow whichever is master");
        }
        return Finding.ok(StoreChecks.ROLE, r.server() + " is a master" + via + version);
    }

    private static Finding eviction(StoreSetup.Redis r) {
        Optional<String> policy = r.config("maxmemory-policy").or(() -> r.info("maxmemory_policy"));
        if (policy.isEmpty()) {
            return Finding.warn(
                    StoreChecks.EVICTION,
                    "maxmemory-policy could not be read: a policy that evicts keys would repeat tokens",
                    "check 'CONFIG GET maxmemory-policy' by hand: it must be noeviction (or volatile-*)");
        }
        String p = policy.get().toLowerCase(Locale.ROOT);
        if (p.startsWith("allkeys-")) {
            return Finding.fail(
                    StoreChecks.EVICTION,
                    "maxmemory-policy " + p + " may evict fence's counters, which would repeat tokens: fence refuses"
                            + " this Redis",
                    "CONFIG SET maxmemory-policy noeviction, and set it in redis.conf");
        }
        if (p.startsWith("volatile-")) {
            return Finding.warn(
                    StoreChecks.EVICTION,
                    "maxmemory-policy " + p + " evicts only keys with a TTL; fence's keys have none, so they are"
                            + " not evicted (but any other data here with a TTL is)",
                    "CONFIG SET maxmemory-policy noeviction, or keep this Redis for fence alone");
        }
        return Finding.ok(StoreChecks.EVICTION, "maxmemory-policy " + p + ": no key is evicted");
    }

    private static Finding persistence(StoreSetup.Redis r) {
        Optional<String> aof =
                r.config("appendonly").or(() -> r.info("aof_enabled").map(v -> v.equals("1") ? "yes" : "no"));
        if (aof.isEmpty()) {
            return Finding.warn(
                    StoreChecks.PERSISTENCE,
                    "persistence could not be read (CONFIG GET appendonly refused)",
                    "check by hand that appendonly is yes and appendfsync always");
        }
        String lost = "; fence then starts a new generation and voids outstanding leases";
        if (!aof.get().equalsIgnoreCase("yes")) {
            boolean snapshots = r.config("save").map(s -> !s.isBlank()).orElse(true);
            return Finding.warn(
                    StoreChecks.PERSISTENCE,
                    snapshots
                            ? "appendonly no: snapshot-only persistence can lose the last grants on restart" + lost
                            : "appendonly no and no snapshots: a restart loses every grant" + lost,
                    "CONFIG SET appendonly yes and CONFIG SET appendfsync always, and set both in redis.conf");
        }
        String fsync = r.config("appendfsync").orElse("?").toLowerCase(Locale.ROOT);
        return switch (fsync) {
            case "always" -> Finding.ok(
                    StoreChecks.PERSISTENCE, "appendonly yes, appendfsync always: no acknowledged grant is lost");
            case "everysec" -> Finding.warn(
                    StoreChecks.PERSISTENCE,
                    "appendfsync everysec: up to 1 s of grants can be lost on a crash (detected: fence starts a new"
                            + " generation and voids outstanding leases)",
                    "CONFIG SET appendfsync always, and set it in redis.conf");
            case "no" -> Finding.warn(
                    StoreChecks.PERSISTENCE,
                    "appendfsync no: the OS decides when grants reach the disk, and a crash can lose many seconds of"
                            + " them (detected: fence starts a new generation and voids outstanding leases)",
                    "CONFIG SET appendfsync always, and set it in redis.conf");
            default -> Finding.warn(
                    StoreChecks.PERSISTENCE,
                    "appendonly yes, but appendfsync could not be read",
                    "check by hand that appendfsync is always");
        };
    }

    private static Finding replicas(StoreSetup.Redis r) {
        if (!r.info("role").orElse("master").equals("master")) {
            return Finding.ok(StoreChecks.REPLICAS, "not judged: " + r.server() + " is not a master");
        }
        Optional<Integer> connected = r.info("connected_slaves").flatMap(RedisJudge::number);
        Optional<Integer> minimum = r.config("min-replicas-to-write").flatMap(RedisJudge::number);
        if (connected.isEmpty()) {
            return Finding.warn(
                    StoreChecks.REPLICAS,
                    "the replicas could not be read (INFO refused)",
                    "check 'INFO replication' by hand");
        }
        int n = connected.get();
        String mins = minimum.map(m -> ", min-replicas-to-write " + m).orElse("");
        if (minimum.isPresent() && minimum.get() > n) {
            return Finding.fail(
                    StoreChecks.REPLICAS,
                    n + " replica(s) connected" + mins + ": Redis refuses every write (NOREPLICAS)",
                    "bring the replicas back, or lower min-replicas-to-write");
        }
        if (n == 0) {
            return r.viaSentinel()
                    ? Finding.warn(
                            StoreChecks.REPLICAS,
                            "no replica is connected: the sentinels have none to promote if the master fails",
                            "add a replica (replicaof <master> <port>) for Sentinel to promote")
                    : Finding.ok(StoreChecks.REPLICAS, "no replicas: a standalone master");
        }
        if (minimum.orElse(0) == 0) {
            return Finding.warn(
                    StoreChecks.REPLICAS,
                    n + " replica(s) connected" + mins + ": replication is asynchronous, so a promoted replica can miss"
                            + " the last grants (detected: a new generation voids outstanding leases), and a master cut"
                            + " off from its replicas goes on granting",
                    "CONFIG SET min-replicas-to-write 1 (with min-replicas-max-lag 10), and add ?wait=1 to the store URL");
        }
        return Finding.ok(StoreChecks.REPLICAS, n + " replica(s) connected" + mins);
    }

    private static Optional<Integer> number(String s) {
        try {
            return Optional.of(Integer.parseInt(s.trim()));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
