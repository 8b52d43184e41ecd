/**
 * {@code fence serve}: a long-lived HTTP JSON API over one store, so that hosts without a JRE or
 * without store credentials (GHES's default hook environment has bash and curl only) can ask for
 * verdicts with a curl shim, and agents can take leases holding only their own API credential.
 *
 * <p>Built on Jetty's core server (no servlets): non-blocking connections with header, body and idle
 * timeouts and a connection limit, handlers on a bounded thread pool ({@link HookServer}). The hook endpoints
 * call the same judging function as the hook process ({@link dev.fence.hook.PreReceiveHook#judge}), so
 * the two cannot diverge; ancestry, which needs the repository, is asked of the caller ({@link
 * dev.fence.core.KnownAncestry}). The API is documented in {@code docs/api.md}.
 *
 * <p>May import core, hook, audit (the incident page), the store SPI, json (Jackson), Jetty and the Prometheus
 * client; never picocli
 * or {@code dev.fence.cli}. Only this package imports Jetty (not {@code server.client}).
 */
package dev.fence.server;
