/**
 * The agent side: what a harness runs next to an agent's clone. {@link dev.fence.client.FencedPush}
 * pushes with the lease's token and proof and an expected old id the lease recorded (never one the
 * agent gives), {@link dev.fence.client.PrePushGuard} stops a plain {@code git push --force} from a
 * clone, {@link dev.fence.client.LeaseKeeper} renews a lease while a tool's subprocess runs, and {@link
 * dev.fence.client.HolderStatus} words what a holder holds for re-injection into an agent's context.
 *
 * <p>Leases are reached through the one lease port, {@link dev.fence.core.LeaseOperations}: on the store
 * (direct mode) or through {@code fence serve} (server mode). Git is reached only through the {@code
 * git} binary found on the given environment's {@code PATH} (push, ls-remote, config), so ssh, https
 * credential helpers, proxies and {@code insteadOf} work as they do for {@code git push}. Nothing here
 * reads ambient state: the environment arrives as a map, time as a {@link java.time.Clock}. This package
 * may import {@code dev.fence.core} and {@code dev.fence.git}; it must not import picocli, Jedis,
 * Jackson, JGit, {@code java.sql} or {@code dev.fence.cli}.
 */
package dev.fence.client;
