package dev.fence.cli;

import dev.fence.core.Lease;
import dev.fence.core.LeaseService;
import dev.fence.core.Printable;
import dev.fence.core.ResourceState;
import dev.fence.json.Json;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence lease status}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description =
                "Show a resource's live lease (if any), latest granted token, highest accepted token and last write.")
final class LeaseStatusCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    ResourceOptions target;

    @Mixin
    LeaseAccessOptions access;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    LeaseStatusCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        String resource = target.resource();
        try (var leases = access.open(ctx)) {
            LeaseService.Status st = leases.status(resource);
            ResourceState rs = st.state();
            Lease live = st.liveLease();
            if (json) {
                Map<String, Object> m = Json.object();
                m.put("resource", resource);
                m.put("generation", st.generation());
                m.put("floor", st.floor());
                m.put("leaseVoid", st.leaseVoid());
                m.put("lease", Json.lease(live, st.at()));
                m.put("lastLease", Json.lease(rs.lease(), st.at()));
                m.put("latestGranted", rs.latestGranted());
                m.put("highestAccepted", rs.highestAccepted());
                m.put("lastWrite", Json.tip(rs.tip()));
                m.put("at", Json.instant(st.at()));
                ctx.out().println(Json.write(m));
                return ExitCode.OK.code();
            }
            ctx.out().println(Printable.name(resource));
            ctx.out()
                    .println("  lease:            "
                            + (live == null
                                    ? "none"
                                    : Printable.name(live.holder()) + ", token " + live.token() + ", expires "
                                            + live.expiresAt() + " (" + LeaseOutput.until(ctx, live.expiresAt())
                                            + ")"));
            if (live == null && rs.lease() != null) {
                Lease l = rs.lease();
                ctx.out()
                        .println("  last lease:       " + Printable.name(l.holder()) + ", token " + l.token()
                                + (st.leaseVoid()
                                        ? ", void (granted before the store's current generation)"
                                        : (l.released() ? ", released " : ", lapsed ") + l.expiresAt()));
            }
            ctx.out().println("  latest granted:   " + rs.latestGranted());
            ctx.out().println("  highest accepted: " + rs.highestAccepted());
            ctx.out().println("  last write:       " + (rs.tip() == null ? "none" : LeaseOutput.describe(rs.tip())));
            return ExitCode.OK.code();
        }
    }
}
