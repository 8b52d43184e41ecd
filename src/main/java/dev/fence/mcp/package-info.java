/**
 * {@code fence mcp}: the agent's tool layer as a Model Context Protocol server. {@link
 * dev.fence.mcp.FenceTools} is the layer itself — lease tools, {@code read_state}, {@code push_branch}
 * and the file and migration tools — written against the one lease port ({@link
 * dev.fence.core.LeaseOperations}) and the same clients the commands use ({@link
 * dev.fence.client.FencedPush}, {@link dev.fence.files.SharedFiles}, {@link dev.fence.migrate.Migrator}),
 * so every decision is theirs; {@link dev.fence.mcp.FenceMcpServer} puts it on the SDK's stdio transport.
 *
 * <p>The grants (token, proof, TTL) stay inside this process, and in the grant files of its grants
 * directory when it has one: no tool takes a proof or an expected SHA as an argument and no result
 * carries one. Every tool call on a resource the server holds renews that
 * lease before and after it runs, so the heartbeat is the agent's own progress; nothing renews on a
 * timer. FENCED is its own result ({@code isError}, {@code structuredContent.fenced = true}) with the
 * message of {@link dev.fence.core.FencedMessage}.
 *
 * <p>Only this package imports the MCP SDK. It may import {@code core}, {@code client}, {@code files},
 * {@code migrate}, {@code json} and {@code git}; it must not import picocli or {@code dev.fence.cli}.
 */
package dev.fence.mcp;
