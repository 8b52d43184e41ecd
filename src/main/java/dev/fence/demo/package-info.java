/**
 * {@code fence demo}: the incident fence exists for, replayed in compressed time against a real bare
 * repository with fence's real hook, straight on a store or through {@code fence serve} and the curl shim
 * ({@link dev.fence.demo.Demo}). A tool beside the product, like the bench and the fault harness; it
 * doubles as a smoke test of the whole tool.
 *
 * <p>Drives fence's own commands through a {@link dev.fence.demo.FenceRunner} the command line supplies,
 * so it may depend on core, git, hook, install, json, migrate, server, server.client and store but never on
 * {@code dev.fence.cli} or picocli. Starts {@code git} and hook processes; reads no ambient state (the
 * environment, the clock and the output arrive as arguments).
 */
package dev.fence.demo;
