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
            "Only the current holder with the current token may release; anyone else gets FENCED (exit 3)."
        })
final class LeaseReleaseCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    ResourceOptions target;

    @Mixin
    LeaseAccessOptions access;

    @Mixin
    TokenOptions token;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    LeaseReleaseCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        String resource = target.resource();
        try (var leases = access.open(ctx)) {
            var outcome = leases.release(resource, token.holder, token.token, token.proof(ctx));
            return LeaseOutput.checked(ctx, outcome, json, "released");
        }
    }
}
