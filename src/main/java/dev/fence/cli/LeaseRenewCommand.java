package dev.fence.cli;

import dev.fence.core.Durations;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence lease renew}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.FENCED, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL
})
@Command(
        name = "renew",
        mixinStandardHelpOptions = true,
        description = {
            "Extend a lease. Only the current holder with the current token may renew;",
            "anyone else gets FENCED (exit 3): the lease is gone, re-read and re-plan."
        })
final class LeaseRenewCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    ResourceOptions target;

    @Mixin
    LeaseAccessOptions access;

    @Mixin
    TokenOptions token;

    @Option(
            names = "--ttl",
            paramLabel = "DURATION",
            defaultValue = "30s",
            description = "New lease length from now (default: ${DEFAULT-VALUE}).")
    String ttl;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    LeaseRenewCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        String resource = target.resource();
        var duration = Durations.parsePositive("--ttl", ttl);
        try (var leases = access.open(ctx)) {
            var outcome = leases.renew(resource, token.holder, token.token, token.proof(ctx), duration);
            return LeaseOutput.checked(ctx, outcome, json, "renewed");
        }
    }
}
