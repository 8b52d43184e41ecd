package dev.fence.cli;

import dev.fence.core.InvalidInputException;
import dev.fence.faults.Fault;
import dev.fence.faults.Faults;
import dev.fence.faults.FaultsReport;
import dev.fence.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fence faults}: the options; the harness itself is {@link Faults}. */
@ExitCodes({ExitCode.OK, ExitCode.REJECTED, ExitCode.USAGE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "faults",
        mixinStandardHelpOptions = true,
        description = {
            "Check fence's safety under store faults: for each fault, start fresh private servers (loopback, free"
                    + " ports), a bare repository with fence's pre-receive hook installed and N concurrent clients"
                    + " that acquire branch leases, commit, push with the real git, sometimes force-push with a"
                    + " stale grant of another holder or of their own holder's earlier session, and release;"
                    + " inject the fault mid-load; then check the"
                    + " history. Prints, per fault, the operations, the anomalies of each check and the generation"
                    + " changes the clients saw. Takes about 20 s per fault with the defaults.",
            "",
            "Faults (--fault NAME; default: all):",
            "  redis-kill-nopersist                no persistence: kill -9, restart empty",
            "  redis-kill-rdb                      snapshot only: BGSAVE, kill -9, reload",
            "  redis-debug-reload                  older snapshot loaded in place, same run id",
            "  redis-kill-aof-everysec             AOF, fsync everysec: kill -9, reload",
            "  redis-kill-aof-always               AOF, fsync always: kill -9, reload",
            "  redis-promote-lagging-replica       replica cut off, master killed, promoted",
            "  redis-promote-lagging-replica-wait1 the same with ?wait=1, a second replica",
            "  redis-eviction                      allkeys-random, small maxmemory, load",
            "  redis-eviction-window               the same for a moment, then noeviction",
            "  client-clock-slow                   a client 1 h slow first touches it empty",
            "  postgres-promote                    primary killed, sync standby promoted",
            "  postgres-promote-async              the same, async standby cut off first",
            "",
            "Checks (each counts anomalies):",
            "  a  a token granted to two holders in one generation, or two equal proofs",
            "  b  a grant's token at or below one granted before it (any generation)",
            "  c  a push accepted under a token below one already accepted on its ref",
            "  d  a landed commit discarded by another holder's push or a stale one",
            "  e  a stale force-push accepted (any holder's, the pusher's own included)",
            "",
            "Needs git, redis-server and redis-cli on PATH, and for the postgres faults the PostgreSQL server"
                    + " binaries (initdb on PATH, pg_ctl and pg_basebackup next to it); a fault"
                    + " that cannot run here is reported as skipped, never as passed. Never touches a server it did"
                    + " not start.",
            "",
            "Exit: 0 when at least one fault ran and none found an anomaly; 1 (REJECTED) when some fault found"
                    + " anomalies; 6 (CONFIG) when none found any but a fault failed to run or none could run."
        })
final class FaultsCommand implements Callable<Integer> {
    private final Context ctx;

    @Option(
            names = "--clients",
            defaultValue = "4",
            description = "Concurrent clients per fault (default: ${DEFAULT-VALUE}).")
    int clients;

    @Option(
            names = "--seconds",
            defaultValue = "15",
            description = "Seconds the clients work in each fault (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--fault", paramLabel = "NAME", description = "Run this fault (repeatable; default: every fault).")
    List<String> faults = new ArrayList<>();

    @Option(names = "--seed", description = "Seed of the clients' choices (default: a new one each run).")
    Long seed;

    @Option(names = "--keep", description = "Keep the working directory (servers' data, repositories, logs).")
    boolean keep;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    FaultsCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
        if (clients < 1 || clients > 32 || seconds < 2 || seconds > 600) {
            throw new InvalidInputException("--clients must be from 1 to 32 and --seconds from 2 to 600");
        }
        List<Fault> chosen = new ArrayList<>();
        for (String name : faults) {
            Fault f = Fault.byId(name)
                    .orElseThrow(() ->
                            new InvalidInputException("--fault: no fault named '" + name + "'; known: " + known()));
            if (!chosen.contains(f)) {
                chosen.add(f);
            }
        }
        if (chosen.isEmpty()) {
            chosen.addAll(List.of(Fault.values()));
        }
        String fromEnv = ctx.env().get("FENCE_LAUNCHER");
        Path launcher = fromEnv != null && Path.of(fromEnv).isAbsolute() && Files.isExecutable(Path.of(fromEnv))
                ? Path.of(fromEnv)
                : null;
        long s = seed != null ? seed : ctx.clock().millis();
        Faults.Options options = new Faults.Options(clients, Duration.ofSeconds(seconds), chosen, keep, launcher, s);
        FaultsReport report = Faults.run(options, ctx.env(), ctx.err());
        if (json) {
            ctx.out().println(Json.write(report.toMap()));
        } else {
            ctx.out().print(report.toTable());
        }
        return switch (report.verdict()) {
            case SAFE -> ExitCode.OK.code();
            case ANOMALIES -> ExitCode.REJECTED.code();
            case INCOMPLETE -> ExitCode.CONFIG.code();
        };
    }

    private static String known() {
        StringJoiner j = new StringJoiner(", ");
        for (Fault f : Fault.values()) {
            j.add(f.id());
        }
        return j.toString();
    }
}
