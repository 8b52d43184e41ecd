package dev.fence.cli;

import dev.fence.client.DirectLeaseAccess;
import dev.fence.client.LeaseAccess;
import picocli.CommandLine.Mixin;

/**
 * Where the agent-side commands reach leases. Today the store ({@code --store}, direct mode: the harness
 * holds store credentials and issues proofs itself). A {@code --server URL} option belongs here, opening
 * a {@link LeaseAccess} that talks to {@code fence serve}, so no command changes when it comes.
 */
final class LeaseAccessOptions {
    @Mixin
    StoreOption store;

    LeaseAccess open(Context ctx) {
        return new DirectLeaseAccess(store.open(ctx), ctx.clock());
    }
}
