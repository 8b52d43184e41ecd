/**
 * Java clients of {@code fence serve}: the lease operations, ledger queries and the pre-/post-receive
 * hooks in server mode, giving the same outcome values as direct mode so the CLI prints the same output
 * and exit codes. Uses {@code java.net.http.HttpClient} with short timeouts; the credential comes from
 * the environment or a file, never from a command-line argument.
 *
 * <p>May import core, hook and json; never picocli, {@code dev.fence.cli} or a store implementation.
 */
package dev.fence.server.client;
