package dev.fence.cli;

import dev.fence.core.Durations;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fence demo}: the incident replay. */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = {
            "Replay the incident fence exists for, in compressed time, against a real bare repository with"
                    + " fence's real hook: agent A's lease lapses while it is paused, agent B takes over and"
                    + " pushes, A's stale push and each workaround it tries (the token number from the message,"
                    + " a force push, no token, a fresh lease) are FENCED, and A re-reads, finds its goal met and"
                    + " stops. Ends with the ledger timeline.",
            "",
            "Runs on a SQLite file in a temporary directory unless --store is given. Exits 0 only when every"
                    + " expected outcome happened, so it doubles as a smoke test."
        })
final class DemoCommand implements Callable<Integer> {
    private final Context ctx;

    @Option(
            names = "--store",
            paramLabel = "URL",
            description = "Store to replay against (default: a new SQLite file in the demo's directory).")
    String store;

    @Option(
            names = "--ttl",
            paramLabel = "DURATION",
            defaultValue = "3s",
            description = "The compressed lease length (default: ${DEFAULT-VALUE}).")
    String ttl;

    @Option(names = "--keep", description = "Keep the demo's directory (repositories, clones, store) afterwards.")
    boolean keep;

    @Option(
            names = "--progress",
            paramLabel = "WHEN",
            defaultValue = "auto",
            description = "Progress line on stderr: auto (on a terminal), always, never (default: ${DEFAULT-VALUE}).")
    String progress;

    DemoCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() throws IOException {
        var duration = Durations.parsePositive("--ttl", ttl);
        Path dir = Files.createTempDirectory("fence-demo-");
        String url = store != null ? store : "sqlite:" + dir.resolve("fence.db");
        boolean ok;
        try {
            ok = new IncidentDemo(ctx, dir, url, duration, progress()).run();
        } finally {
            if (!keep) {
                delete(dir);
            }
        }
        return ok ? ExitCode.OK.code() : ExitCode.INTERNAL.code();
    }

    private IncidentDemo.Progress progress() {
        boolean show =
                switch (progress) {
                    case "always" -> true;
                    case "never" -> false;
                    case "auto" -> ProcessStreams.isTerminal(ctx.err())
                            && ctx.env().get("CI") == null
                            && !"dumb".equals(ctx.env().getOrDefault("TERM", "dumb"));
                    default -> throw new dev.fence.core.InvalidInputException(
                            "--progress must be auto, always or never; got '" + progress + "'");
                };
        return show ? IncidentDemo.Progress.terminal(ctx.err()) : IncidentDemo.Progress.none();
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
