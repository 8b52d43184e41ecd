/**
 * The hook-path wing: everything a one-shot hook process does to start sooner, in one place and behind
 * named seams, so that the rest of fence is ordinary code. Here live the process entry ({@link
 * dev.fence.hookpath.ProcessEntry}, the only code that touches the real process), the hook's fast path
 * past picocli ({@link dev.fence.hookpath.HookRunner}), the class-data archive's training run and
 * builder ({@link dev.fence.hookpath.ArchiveTraining}, {@link dev.fence.hookpath.Archives}), every JVM
 * flag and system property ({@link dev.fence.hookpath.JvmSettings}), and the seams: the clock ({@link
 * dev.fence.hookpath.UtcMillisClock}), the digests ({@link dev.fence.hookpath.PlainDigests}, injected
 * into the core's proofs and the hook's record); the SQLite binding's and the Redis transport's seams
 * sit in their stores, selected from here ({@code Stores.preload}, the one-shot store options).
 *
 * <p>Each seam's comment says what it saves and the {@code fence bench} row that measures it; a trick
 * that no longer pays is removed. {@code LauncherArchiveIT} checks what the bench needs of a hook: that
 * it starts from its archive and generates no class at run time. May import everything but {@code
 * dev.fence.cli} (which builds on this package).
 */
package dev.fence.hookpath;
