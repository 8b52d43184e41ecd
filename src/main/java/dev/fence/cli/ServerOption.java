package dev.fence.cli;

import dev.fence.core.InvalidInputException;
import dev.fence.server.client.FenceClient;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * {@code --server URL}: talk to {@code fence serve} instead of the store. Falls back to {@code
 * FENCE_SERVER} unless {@code --store} was given; the credential comes from {@code FENCE_CREDENTIAL},
 * {@code FENCE_CREDENTIAL_FILE} or {@code ~/.config/fence/credential}, never from an option.
 */
final class ServerOption {
    /** How long a client waits for one answer from the server. */
    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(5);

    @Option(
            names = "--server",
            paramLabel = "URL",
            description = "Use the fence server at URL (default: $FENCE_SERVER unless --store is given). The"
                    + " credential comes from $FENCE_CREDENTIAL, the file $FENCE_CREDENTIAL_FILE, or"
                    + " ~/.config/fence/credential.")
    String server;

    /** The server URL in effect, or null for direct mode. */
    String resolve(Context ctx, StoreOption store) {
        if (server != null && store.store != null) {
            throw new InvalidInputException("give either --server or --store, not both");
        }
        if (server != null) {
            return server;
        }
        if (store.store != null) {
            return null;
        }
        String env = ctx.env().get(FenceClient.SERVER_ENV);
        return env == null || env.isBlank() ? null : env.strip();
    }

    /** A client of the server in effect. */
    static FenceClient client(Context ctx, String url) {
        return FenceClient.create(url, ctx.env(), CLIENT_TIMEOUT);
    }
}
