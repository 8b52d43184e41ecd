package dev.fence.cli;

import dev.fence.core.Durations;
import dev.fence.core.Identities;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseStore;
import dev.fence.json.Json;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence store retention}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "retention",
        mixinStandardHelpOptions = true,
        description = {
            "Show, or with --set change, how long the store keeps ledger events.",
            "Retention is a setting of the store, kept with it: every client trims the ledger by the store's"
                    + " value and clock, and a store URL whose ?retention= differs is refused. Counters and"
                    + " highest-accepted tokens are never trimmed.",
            "Every change is recorded in the ledger as a 'retention' event naming the old and the new value and"
                    + " the OS user who made it; the change trims only events older than that record. A value"
                    + " under 1d, which would erase the shared history within a day, is refused (exit 2) unless"
                    + " --force is given."
        })
final class StoreRetentionCommand implements Callable<Integer> {
    /**
     * The shortest retention set without {@code --force}: anything shorter lets one command erase what an
     * incident review of yesterday needs.
     */
    static final Duration FLOOR = Duration.ofDays(1);

    private final Context ctx;

    @Mixin
    StoreOption store;

    @Option(names = "--set", paramLabel = "DURATION", description = "The new retention, e.g. 90d, 12h.")
    String set;

    @Option(
            names = "--force",
            description = "Allow --set below 1d (the shared ledger then keeps less than a day of history).")
    boolean force;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    StoreRetentionCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        Duration wanted = set == null ? null : Durations.parsePositive("--set", set);
        if (wanted != null && wanted.compareTo(FLOOR) < 0 && !force) {
            throw new InvalidInputException("--set " + set + " is shorter than " + Durations.format(FLOOR)
                    + ": it would drop the shared ledger's history for every client; pass --force if that is"
                    + " meant (the change is recorded in the ledger either way)");
        }
        try (LeaseStore s = store.open(ctx)) {
            Duration now = s.retention(
                    wanted,
                    changedBy(),
                    ctx.clock().instant(),
                    () -> Identities.candidate(ctx.clock().instant()));
            if (json) {
                Map<String, Object> m = Json.object();
                m.put("retention", Durations.format(now));
                m.put("retentionMillis", now.toMillis());
                m.put("store", s.describe());
                ctx.out().println(Json.write(m));
            } else {
                ctx.out().println("ledger retention of " + s.describe() + ": " + Durations.format(now));
            }
            return ExitCode.OK.code();
        }
    }

    /**
     * The OS account the command runs as, from the JVM (which asks the system for the process's user), not
     * from {@code USER}, which whoever runs the command sets; a {@code USER} naming someone else is recorded
     * beside it.
     */
    private String changedBy() {
        String account = System.getProperty("user.name", "unknown");
        String claimed = ctx.env().get("USER");
        return claimed == null || claimed.isBlank() || claimed.equals(account) ? account : account + "/USER=" + claimed;
    }
}
