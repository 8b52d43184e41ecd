/**
 * Turns what a git host hands a pre-receive hook into core values: stdin lines become {@link
 * dev.fence.core.RefUpdate}s ({@link dev.fence.hook.HookInputParser}), {@code GIT_PUSH_OPTION_*} becomes
 * {@link dev.fence.core.PushOptions} ({@link dev.fence.hook.PushOptionsReader}), the host's identity
 * variables become a repo id and an {@link dev.fence.core.Actor} ({@link dev.fence.hook.HookEnvironments}),
 * and the hook's configuration file becomes a {@link dev.fence.core.FencePolicy} ({@link
 * dev.fence.hook.HookConfig}).
 *
 * <p>Nothing here reads ambient state: the environment arrives as a map, input as a stream, files as
 * paths. This package may import {@code dev.fence.core} and the store SPI; it must not import picocli,
 * Jedis, Jackson, {@code java.sql} or {@code dev.fence.cli}.
 */
package dev.fence.hook;
