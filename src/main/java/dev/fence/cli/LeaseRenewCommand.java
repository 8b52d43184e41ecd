package dev.fence.cli;

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
            "anyone else gets FENCED (exit 3): the lease is gone, re-read and re-plan.",
            "",
            "The grant comes from --grant-file FILE (as 'fence lease acquire --grant-file FILE' wrote it), or"
                    + " --token N, or $FENCE_TOKEN; the proof from the file, --proof or $FENCE_PROOF. Without --ttl"
                    + " the lease is renewed for the TTL it was granted with (known from the grant file; with a"
                    + " bare token, --ttl is required).",
            "",
            "Example: fence lease renew --grant-file ~/.fence/app-main.grant"
        })
final class LeaseRenewCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    ResourceOptions target;

    @Mixin
    LeaseAccessOptions access;

    @Mixin
    GrantOptions grant;

    @Option(
            names = "--ttl",
            paramLabel = "DURATION",
            description = "New lease length from now (default: the TTL the lease was granted with).")
    String ttl;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    LeaseRenewCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        GrantOptions.Held held = grant.require(ctx, target, "fence lease renew");
        var duration = held.ttl(ttl, "fence lease renew");
        try (var leases = access.open(ctx)) {
            var outcome = leases.renew(held.resource(), held.holder(), held.token(), held.proof(), duration);
            return LeaseOutput.checked(ctx, outcome, json, "renewed");
        }
    }
}
