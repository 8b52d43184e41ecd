package dev.fence.faults;

import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.hookpath.JvmSettings;
import dev.fence.install.Launch;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code fence faults}: runs each requested {@link Fault} in turn against fresh servers, a fresh bare
 * repository with fence's hook and fresh clients, and checks each run's history with {@link
 * HistoryChecker}. A fault's run: start the store, install the hook, start the clients, let them work for
 * 40 % of the time, inject the fault, let them work to the end (at least another 40 %), stop them, read the
 * branches' final histories, check.
 *
 * <p>Bounded: every wait has a timeout, every process started is killed when its fault ends (and by a
 * shutdown hook if the JVM ends first), and the working directory is deleted unless kept.
 */
public final class Faults {
    /** Branches of the bare repository: each one fenced resource the clients contend for. */
    static final List<String> BRANCHES = List.of("main", "dev");

    private static final Pattern REASON = Pattern.compile("reason=([a-z-]+)");

    private Faults() {}

    /**
     * What to run.
     *
     * @param clients concurrent clients per fault
     * @param perFault how long the clients work in each fault
     * @param faults the faults, in order
     * @param keep keep the working directory (servers' data, repositories, logs)
     * @param launcher the {@code fence} launcher the installed hook runs, or null for a script running this
     *     JVM's class path
     * @param seed for the clients' choices
     */
    public record Options(int clients, Duration perFault, List<Fault> faults, boolean keep, Path launcher, long seed) {
        public Options {
            faults = List.copyOf(faults);
        }
    }

    /**
     * Runs every fault of {@code o}; progress lines go to {@code progress}.
     *
     * @param env the process environment ({@code PATH} finds git, redis-server, redis-cli, initdb and runuser)
     */
    public static FaultsReport run(Options o, Map<String, String> env, PrintWriter progress) throws IOException {
        FaultRun.Tools tools = FaultRun.Tools.find(env);
        Path work = Files.createTempDirectory("fence-faults-");
        if (!o.keep()) {
            Children.deleteOnExit(work);
        }
        List<FaultResult> results = new ArrayList<>();
        try {
            Launch launch = new Launch.Launcher((o.launcher() != null ? o.launcher() : hookLauncher(work)).toString());
            for (Fault f : o.faults()) {
                String skip = Scenarios.skipReason(f, tools);
                if (skip != null) {
                    progress.println("[" + f.id() + "] skipped: " + skip);
                    results.add(FaultResult.skipped(f, skip));
                    continue;
                }
                results.add(runOne(f, o, env, tools, work.resolve(f.id()), launch, progress));
            }
        } finally {
            if (o.keep()) {
                progress.println("kept: " + work);
            } else {
                Children.deleteNow(work);
            }
            progress.flush();
        }
        return new FaultsReport(results);
    }

    private static FaultResult runOne(
            Fault fault,
            Options o,
            Map<String, String> env,
            FaultRun.Tools tools,
            Path dir,
            Launch launch,
            PrintWriter progress) {
        long start = System.nanoTime();
        long began = start;
        Scenarios.Scenario scenario = Scenarios.of(fault);
        Workload workload = null;
        int stuck = 0;
        long injected = Long.MAX_VALUE;
        try (FaultRun run = new FaultRun(fault, dir, tools, progress)) {
            try {
                Files.createDirectories(dir);
                String url = scenario.start(run);
                // The store's identity is made as a host with a right clock makes it on first use.
                try (LeaseStore s = Stores.open(url, StoreOptions.defaults())) {
                    new LeaseService(s, Clock.systemUTC()).identity();
                }
                run.history = new History();
                run.repo = GitRepo.create(dir, BRANCHES, env, launch, url);
                workload = new Workload(
                        run.repo,
                        run.history,
                        url,
                        scenario.clocks(o.clients()),
                        Workload.Settings.defaults(),
                        o.seed());
                run.workload = workload;
                long workNanos = o.perFault().toNanos();
                long workStart = System.nanoTime();
                workload.start();
                run.say(o.clients() + " clients working");
                sleepNanos((long) (workNanos * 0.4));
                run.say("injecting " + fault.id());
                scenario.inject(run);
                injected = System.nanoTime();
                sleepNanos(Math.max((long) (workNanos * 0.4), workNanos - (injected - workStart)));
                stuck = workload.stop(Duration.ofSeconds(60));
                workload = null;
                run.stopFeeders();
                if (stuck > 0) {
                    run.note(stuck + " clients had not finished their cycle 60 s after the end (interrupted)");
                }
                if (scenario instanceof Scenarios.Eviction e) {
                    run.note("evicted keys: " + e.evicted());
                }
                if (o.keep()) {
                    writeHistory(run.history, dir.resolve("history.jsonl"), began);
                }
                run.say("checking the history");
                HistoryChecker.Findings findings = HistoryChecker.check(run.history, run.repo.tips(), run.repo);
                return result(fault, o, run, findings, injected, start, stuck);
            } catch (IOException | RuntimeException e) {
                if (workload != null) {
                    workload.stop(Duration.ofSeconds(30));
                }
                run.say("error: " + e.getMessage());
                return new FaultResult(
                        fault,
                        FaultResult.Status.ERROR,
                        String.valueOf(e.getMessage()),
                        (System.nanoTime() - start) / 1e9,
                        o.clients(),
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        null,
                        Map.of(),
                        run.notes());
            }
        }
    }

    private static FaultResult result(
            Fault fault,
            Options o,
            FaultRun run,
            HistoryChecker.Findings findings,
            long injected,
            long start,
            int stuck) {
        int accepted = 0;
        int refused = 0;
        int stale = 0;
        int staleAccepted = 0;
        Map<String, Integer> refusals = new LinkedHashMap<>();
        for (History.Push p : run.history.pushes()) {
            if (p.accepted()) {
                accepted++;
            } else {
                refused++;
                refusals.merge(reasonKey(p.reason()), 1, Integer::sum);
            }
            if (p.stale()) {
                stale++;
                if (p.accepted()) {
                    staleAccepted++;
                }
            }
        }
        List<History.Grant> grants = run.history.grants();
        List<Long> pushMillis = new ArrayList<>();
        for (History.Push p : run.history.pushes()) {
            pushMillis.add((p.ackedNanos() - p.invokedNanos()) / 1_000_000);
        }
        int after = run.history.grantsSince(injected);
        List<String> notes = new ArrayList<>(run.notes());
        if (!pushMillis.isEmpty()) {
            pushMillis.sort(null);
            notes.add("git push took " + pushMillis.get(pushMillis.size() / 2) + " ms (median), "
                    + pushMillis.get(pushMillis.size() * 9 / 10) + " ms (p90); " + run.workload.busy()
                    + " acquires found the lease busy");
        }
        notes.add("stale force-pushes tried: " + run.workload.wakes());
        Map<String, Integer> kinds = run.workload.errorKinds(3);
        if (!kinds.isEmpty()) {
            notes.add("client errors (most frequent): " + kinds);
        }
        if (after == 0) {
            notes.add("no grant after the fault: the clients could not work against the store afterwards");
        }
        FaultResult.Status status = findings.total() > 0 ? FaultResult.Status.ANOMALIES : FaultResult.Status.PASSED;
        return new FaultResult(
                fault,
                status,
                null,
                (System.nanoTime() - start) / 1e9,
                o.clients(),
                grants.size(),
                after,
                accepted,
                refused,
                stale,
                staleAccepted,
                run.workload.errors(),
                findings,
                refusals,
                notes);
    }

    /** A refused push's reason for counting: the FENCED reason code, else the message's start. */
    static String reasonKey(String reason) {
        if (reason == null) {
            return "unknown";
        }
        Matcher m = REASON.matcher(reason);
        if ((reason.startsWith("FENCED") || reason.startsWith("REJECTED")) && m.find()) {
            return m.group(1);
        }
        return reason.length() > 80 ? reason.substring(0, 80) + "..." : reason;
    }

    /**
     * A launcher script for the hook that runs this JVM's java on this JVM's class path (the fence jar, when
     * fence runs from it), with the options a hook's JVM starts with.
     */
    private static Path hookLauncher(Path work) throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> words = new ArrayList<>();
        words.add(java.toString());
        words.addAll(JvmSettings.OPTIONS);
        words.addAll(JvmSettings.jdkOptions(Runtime.version().feature()));
        words.add("-cp");
        words.add(System.getProperty("java.class.path"));
        words.add(JvmSettings.MAIN);
        StringBuilder script = new StringBuilder("#!/bin/sh\nexec");
        for (String w : words) {
            script.append(" '").append(w.replace("'", "'\\''")).append('\'');
        }
        script.append(" \"$@\"\n");
        Path file = work.resolve("fence-launcher");
        Files.writeString(file, script, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    /** The history as JSON lines, grants and pushes in acknowledgement order, times in ms since the start. */
    private static void writeHistory(History h, Path file, long began) throws IOException {
        List<Map<String, Object>> lines = new ArrayList<>();
        for (History.Grant g : h.grants()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("op", "grant");
            m.put("invokedMs", (g.invokedNanos() - began) / 1e6);
            m.put("ackedMs", (g.ackedNanos() - began) / 1e6);
            m.put("resource", g.resource());
            m.put("holder", g.holder());
            m.put("token", g.token());
            m.put("generation", g.generation());
            m.put("proofSha256", g.proofHash());
            lines.add(m);
        }
        for (History.Push p : h.pushes()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("op", p.stale() ? "stale-push" : "push");
            m.put("invokedMs", (p.invokedNanos() - began) / 1e6);
            m.put("ackedMs", (p.ackedNanos() - began) / 1e6);
            m.put("ref", p.ref());
            m.put("holder", p.holder());
            m.put("token", p.token());
            m.put("accepted", p.accepted());
            m.put("forced", p.forced());
            m.put("old", p.oldId());
            m.put("new", p.newId());
            m.put("reason", p.reason());
            lines.add(m);
        }
        lines.sort(Comparator.comparingDouble(m -> (Double) m.get("ackedMs")));
        StringBuilder sb = new StringBuilder();
        lines.forEach(m -> sb.append(Json.write(m)).append('\n'));
        Files.writeString(file, sb, StandardCharsets.UTF_8);
    }

    private static void sleepNanos(long nanos) {
        RedisNode.sleep(Math.max(0, nanos / 1_000_000));
    }
}
