/**
 * {@code fence faults}: the fault harness. Concurrent clients take leases through {@link
 * dev.fence.core.LeaseService}, commit and push with the real {@code git} into a bare repository whose
 * pre-receive hook is fence's (installed by {@link dev.fence.install.BareRepoInstaller}), and sometimes wake a
 * stale grant and force-push with it, while the harness injects one store fault (a Redis killed with each
 * persistence mode, an older snapshot reloaded in place, a lagging replica promoted, keys evicted for good
 * or for a moment, a client clock an hour slow, a PostgreSQL primary killed and its synchronous or cut-off
 * asynchronous standby promoted). {@link HistoryChecker} then reads what was recorded and what the
 * repository holds for the five safety properties.
 *
 * <p>Free of picocli: {@code dev.fence.cli.FaultsCommand} only parses options. Starts only loopback
 * servers on free ports, and ends every process it started.
 */
package dev.fence.faults;
