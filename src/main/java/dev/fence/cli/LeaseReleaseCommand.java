package dev.fence.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence lease release}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.FENCED, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL
})
@Command(
        name = "release",
        mixinStandardHelpOptions = true,
        description = {
            "Release a lease so others may acquire it at once.",
            "Only the current holder with the current token may release; anyone else gets FENCED (exit 3).",
            "The grant comes from --grant-file FILE, or --token N, or $FENCE_TOKEN; the proof from the file,"
                    + " --proof or $FENCE_PROOF.",
            "",
            "Example: fence lease release --grant-file ~/.fence/app-main.grant"
        })
final class LeaseReleaseCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    ResourceOptions target;

    @Mixin
    LeaseAccessOptions access;

    @Mixin
    GrantOptions grant;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    LeaseReleaseCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        GrantOptions.Held held = grant.require(ctx, target, "fence lease release");
        try (var leases = access.open(ctx)) {
            var outcome = leases.release(held.resource(), held.holder(), held.token(), held.proof());
            return LeaseOutput.checked(ctx, outcome, json, "released");
        }
    }
}
