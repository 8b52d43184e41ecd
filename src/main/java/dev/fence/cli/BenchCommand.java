package dev.fence.cli;

import dev.fence.bench.Bench;
import dev.fence.bench.BenchReport;
import dev.fence.core.InvalidInputException;
import dev.fence.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fence bench}: the options; the benchmark itself is {@link Bench}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.INTERNAL})
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        description = {
            "Measure design section 7's budget on this machine, in one run: the median and p90 time of pushes"
                    + " (each one new fast-forward commit, pushed with git to a local bare repo) with no hook, a"
                    + " bash + redis-cli reference hook, a JVM hello world (the floor), the Java hook on SQLite"
                    + " and on Redis (JDK 17 with its CDS archive; JDK 25 with its AOT cache when one is found),"
                    + " and the curl shim through an in-process 'fence serve'; the server's verdict latency; and"
                    + " lease acquires per second and p99 latency through one long-running client (warmed up"
                    + " first with 3 s of untimed calls) at 1, 8 and 32 callers next to redis-benchmark running"
                    + " the same script.",
            "Starts its own redis-server on a free loopback port (rows that need redis-server, redis-cli or"
                    + " redis-benchmark are skipped, with a note, when they are missing), rebuilds the archives"
                    + " for the jar, and removes everything it made. Takes about two minutes; run it on a quiet"
                    + " machine."
        })
final class BenchCommand implements Callable<Integer> {
    private final Context ctx;

    @Option(
            names = "--pushes",
            defaultValue = "20",
            description = "Timed pushes per scenario (default: ${DEFAULT-VALUE}).")
    int pushes;

    @Option(
            names = "--warmup",
            defaultValue = "2",
            description = "Untimed pushes per scenario before them (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(
            names = "--jdk17",
            paramLabel = "PATH",
            description = "JDK 17 home for the JDK 17 rows (default: the running JDK if 17 to 24, else one under"
                    + " /usr/lib/jvm).")
    Path jdk17;

    @Option(
            names = "--jdk25",
            paramLabel = "PATH",
            description = "JDK 25+ home for the AOT-cache rows (default: /usr/lib/jvm/temurin-25*, if present).")
    Path jdk25;

    @Option(names = "--no-jdk25", description = "Skip the JDK 25 rows.")
    boolean noJdk25;

    @Option(
            names = "--lease-seconds",
            defaultValue = "3",
            description = "Seconds of each lease-throughput measurement (default: ${DEFAULT-VALUE}).")
    int leaseSeconds;

    @Option(
            names = "--verdicts",
            defaultValue = "1000",
            description = "Timed verdict requests to fence serve (default: ${DEFAULT-VALUE}).")
    int verdicts;

    @Option(
            names = "--hook-launcher",
            paramLabel = "PATH",
            description = "Run the Java hook rows with this fence launcher (default: the one running this command),"
                    + " to compare another build.")
    Path hookLauncher;

    @Option(
            names = "--hook-jar",
            paramLabel = "PATH",
            description = "Run the Java hook rows with this fence.jar (default: this one), to compare another build.")
    Path hookJar;

    @Option(
            names = "--baseline-launcher",
            paramLabel = "PATH",
            description = "With --baseline-jar: also run the Java hook rows with this other build's launcher and"
                    + " jar, push by push beside this build's, to compare the two under the same load (rows marked"
                    + " 'baseline build'; the targets are this build's).")
    Path baselineLauncher;

    @Option(
            names = "--baseline-jar",
            paramLabel = "PATH",
            description = "The other build's fence.jar, with --baseline-launcher.")
    Path baselineJar;

    @Option(names = "--json", description = "Print one JSON object instead of the table.")
    boolean json;

    BenchCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
        if (pushes < 1 || pushes > 1000 || warmup < 0 || warmup > 100) {
            throw new InvalidInputException("--pushes must be from 1 to 1000 and --warmup from 0 to 100");
        }
        if (leaseSeconds < 1 || leaseSeconds > 60 || verdicts < 1 || verdicts > 100_000) {
            throw new InvalidInputException("--lease-seconds must be from 1 to 60 and --verdicts from 1 to 100000");
        }
        Path running = Path.of(System.getProperty("java.home"));
        Path j17 = jdk17 != null ? jdk17 : Bench.findJdk17(running);
        Path j25 = noJdk25 ? null : jdk25 != null ? jdk25 : Bench.findJdk25();
        for (Path j : new Path[] {jdk17, jdk25}) {
            if (j != null && !Files.isExecutable(j.resolve("bin").resolve("java"))) {
                throw new InvalidInputException(j + " is not a JDK home (no bin/java)");
            }
        }
        String launcherEnv = ctx.env().get("FENCE_LAUNCHER");
        Path launcher = hookLauncher != null
                ? hookLauncher
                : launcherEnv == null || launcherEnv.isBlank() ? null : Path.of(launcherEnv);
        Path jar = hookJar != null
                ? hookJar
                : Path.of(BenchCommand.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI());
        if ((baselineLauncher == null) != (baselineJar == null)) {
            throw new InvalidInputException("--baseline-launcher and --baseline-jar go together");
        }
        Bench.Build baseline = null;
        if (baselineLauncher != null) {
            if (!Files.isExecutable(baselineLauncher) || !Files.isRegularFile(baselineJar)) {
                throw new InvalidInputException("--baseline-launcher must be an executable launcher and --baseline-jar"
                        + " a jar: " + baselineLauncher + ", " + baselineJar);
            }
            baseline = new Bench.Build(baselineLauncher.toAbsolutePath(), baselineJar.toAbsolutePath());
        }
        Bench.Options options = new Bench.Options(
                pushes, warmup, j17, j25, launcher, jar, leaseSeconds, List.of(1, 8, 32), verdicts, baseline);
        BenchReport report = Bench.run(options, ctx.env(), ctx.err());
        if (json) {
            ctx.out().println(Json.write(report.toMap()));
        } else {
            ctx.out().print(report.toTable());
        }
        return ExitCode.OK.code();
    }
}
