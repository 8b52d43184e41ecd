package dev.fence.cli;

import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService;
import dev.fence.server.client.RemoteLeases;
import picocli.CommandLine.Mixin;

/**
 * Where a command reaches leases: the store ({@code --store}, direct mode: the harness holds store
 * credentials and issues proofs itself), or {@code fence serve} ({@code --server URL} or {@code
 * FENCE_SERVER}, server mode: the agent holds only its API credential, from {@code FENCE_CREDENTIAL} or
 * {@code FENCE_CREDENTIAL_FILE}). Every lease, exec, push and status command opens the one lease port
 * here.
 */
final class LeaseAccessOptions {
    @Mixin
    StoreOption store;

    @Mixin
    ServerOption server;

    /** The lease port in effect; close it when done. */
    LeaseOperations open(Context ctx) {
        return open(ctx, server.resolve(ctx, store), store);
    }

    /** The lease port at server {@code url}, or on the store {@code store} names when {@code url} is null. */
    static LeaseOperations open(Context ctx, String url, StoreOption store) {
        if (url != null) {
            return new RemoteLeases(ServerOption.client(ctx, url));
        }
        return new LeaseService(store.open(ctx), ctx.clock());
    }
}
