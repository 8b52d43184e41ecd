package dev.fence.cli;

import dev.fence.client.DirectLeaseAccess;
import dev.fence.client.LeaseAccess;
import dev.fence.server.client.RemoteLeaseAccess;
import picocli.CommandLine.Mixin;

/**
 * Where the agent-side commands ({@code push}, {@code exec}, {@code status}) reach leases: the store
 * ({@code --store}, direct mode: the harness holds store credentials and issues proofs itself), or
 * {@code fence serve} ({@code --server URL} or {@code FENCE_SERVER}, server mode: the agent holds only
 * its API credential, from {@code FENCE_CREDENTIAL} or {@code FENCE_CREDENTIAL_FILE}). The same rules as
 * {@code fence lease … --server}.
 */
final class LeaseAccessOptions {
    @Mixin
    StoreOption store;

    @Mixin
    ServerOption server;

    LeaseAccess open(Context ctx) {
        String url = server.resolve(ctx, store);
        if (url != null) {
            return new RemoteLeaseAccess(ServerOption.client(ctx, url));
        }
        return new DirectLeaseAccess(store.open(ctx), ctx.clock());
    }
}
