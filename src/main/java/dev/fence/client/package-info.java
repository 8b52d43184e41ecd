/**
 * The agent side: what a harness runs next to an agent's clone. {@link dev.fence.client.FencedPush}
 * pushes with the lease's token and proof and an expected old id the lease recorded (never one the
 * agent gives), {@link dev.fence.client.PrePushGuard} stops a plain {@code git push --force} from a
 * clone, {@link dev.fence.client.LeaseKeeper} renews a lease while a tool's subprocess runs, and {@link
 * dev.fence.client.HolderStatus} words what a holder holds for re-injection into an agent's context.
 *
 * <p>Leases are reached through {@link dev.fence.client.LeaseAccess}: directly in the store today, through
 * {@code fence serve} later. Git is reached through JGit (pushes) and the {@code git} binary found on
 * the given environment's {@code PATH} (ls-remote, config). Nothing here reads ambient state: the
 * environment arrives as a map, time as a {@link java.time.Clock}. This package may import {@code
 * dev.fence.core} and JGit; it must not import picocli, Jedis, Jackson, {@code java.sql} or {@code
 * dev.fence.cli}.
 */
package dev.fence.client;
