/**
 * {@code fence integrate claude-code}: the project files that wire fence into Claude Code ({@link
 * dev.fence.integrate.ClaudeCodeFiles}: hooks in {@code .claude/settings.json}, the {@code fence mcp}
 * server in {@code .mcp.json}, merged into what is there) and what those hooks do ({@link
 * dev.fence.integrate.ClaudeCodeHooks}: the tool-call heartbeat, the live lease state after a compaction,
 * and the Bash guard against a plain {@code git push}).
 *
 * <p>Leases are reached through the one lease port, {@link dev.fence.core.LeaseOperations}; JSON through
 * {@link dev.fence.json.Json} as ordered maps, so a merged file keeps every key fence did not write. This
 * package may import {@code core}, {@code client} and {@code json}; it must not import picocli, Jackson,
 * the MCP SDK or {@code dev.fence.cli}.
 */
package dev.fence.integrate;
