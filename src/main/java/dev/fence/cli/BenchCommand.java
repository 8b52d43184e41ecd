package dev.fence.cli;

import dev.fence.bench.Bench;
import dev.fence.bench.BenchReport;
import dev.fence.bench.Scale;
import dev.fence.bench.ScalePlot;
import dev.fence.bench.ScaleReport;
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
                    + " and the curl shim through an in-process 'fence serve'; the server's verdict latency (once"
                    + " verdicts from 16 clients have warmed it until its JIT is quiet, at most 60 s); a new"
                    + " 'fence serve' process's first 200 verdicts, with --warm-up 0 and after its default"
                    + " warm-up; and"
                    + " lease acquires per second and p99 latency through one long-running client (warmed up"
                    + " first with 3 s of untimed calls) at 1, 8 and 32 callers next to redis-benchmark running"
                    + " the same script. The scenarios push in turns, in a new order each round; each hook and"
                    + " shim target shows its 95 %% interval over the rounds, and one whose budget lies inside it"
                    + " is marked '*' (a rerun could turn it).",
            "Starts its own redis-server on a free loopback port (rows that need redis-server, redis-cli or"
                    + " redis-benchmark are skipped, with a note, when they are missing), rebuilds the archives"
                    + " for the jar, and removes everything it made. Takes about three minutes; run it on a quiet"
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

    @Option(
            names = "--scale",
            description = "Instead of the push budget: how cost grows with the store's size (1, 10k, 100k leased"
                    + " branches; 0, 100k, 1M ledger events), ledger queries at 1M events, refs per push (1 to"
                    + " 10,000), concurrent hooks through fence serve (1 to 256, then the same server's bare"
                    + " HTTP exchanges at 64) and verdicts during a ledger trim,"
                    + " on SQLite, a private Redis and PostgreSQL (with --postgres). Each row is measured beside its"
                    + " baseline and shown as a ratio to it. Takes several minutes per store.")
    boolean scale;

    @Option(names = "--quick", description = "With --scale: ten times smaller sizes, to try it out in a minute or two.")
    boolean quick;

    @Option(
            names = "--postgres",
            paramLabel = "URL",
            description = "With --scale: the PostgreSQL server (postgresql://USER@HOST:PORT) on which the bench creates"
                    + " databases of its own and drops them after; without it the PostgreSQL rows are skipped.")
    String postgres;

    @Option(
            names = "--scale-stores",
            paramLabel = "STORE",
            split = ",",
            description = "With --scale: only these stores (sqlite, redis, postgresql; default: all).")
    List<String> scaleStores;

    @Option(
            names = "--scale-rows",
            paramLabel = "ROWS",
            split = ",",
            description = "With --scale: only these groups of rows (store: store size, ledger queries, refs per push"
                    + " and verdicts during a trim; concurrency: hooks through fence serve and its bare exchanges;"
                    + " push: the whole largest"
                    + " push through the Java hook, SQLite only; default: all).")
    List<String> scaleRows;

    @Option(
            names = "--plot",
            paramLabel = "FILE.svg",
            description = "Write an SVG plot of the scale figures: of this --scale run, or of --from's JSON.")
    Path plot;

    @Option(
            names = "--from",
            paramLabel = "FILE.json",
            description = "With --plot: draw the plot from the JSON that 'fence bench --scale --json' printed, without"
                    + " running anything.")
    Path from;

    BenchCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
        if (from != null || scale) {
            return scale();
        }
        if (quick || postgres != null || scaleStores != null || scaleRows != null || plot != null) {
            throw new InvalidInputException("--quick, --postgres, --scale-stores, --scale-rows and --plot go with"
                    + " --scale (or --plot with --from)");
        }
        Bench.Options options = Bench.options(
                new Bench.Request(
                        pushes,
                        warmup,
                        jdk17,
                        jdk25,
                        noJdk25,
                        leaseSeconds,
                        verdicts,
                        hookLauncher,
                        hookJar,
                        baselineLauncher,
                        baselineJar),
                ctx.env());
        BenchReport report = Bench.run(options, ctx.env(), ctx.err());
        if (json) {
            ctx.out().println(Json.write(report.toMap()));
        } else {
            ctx.out().print(report.toTable());
        }
        return ExitCode.OK.code();
    }

    private Integer scale() throws Exception {
        if (from != null) {
            if (plot == null || scale) {
                throw new InvalidInputException("--from goes with --plot, without --scale");
            }
            ScalePlot.write(Json.readObject(Files.readString(from)), plot);
            return ExitCode.OK.code();
        }
        Scale.Options options = Scale.options(quick, scaleStores, postgres, scaleRows);
        ScaleReport report = Scale.run(options, ctx.env(), ctx.err());
        if (json) {
            ctx.out().println(Json.write(report.toMap()));
        } else {
            ctx.out().print(report.toTable());
        }
        if (plot != null) {
            ScalePlot.write(Json.readObject(Json.write(report.toMap())), plot);
        }
        return ExitCode.OK.code();
    }
}
