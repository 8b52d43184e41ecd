/**
 * Fenced writes of shared files: {@link dev.fence.files.SharedFiles} replaces a file only when its sha256
 * is still the one the writer read and the writer's lease token passes the hook's token rule ({@link
 * dev.fence.core.FencedWrites}); the replacement is atomic (a temporary file in the same directory, fsync,
 * rename, fsync of the directory) and made under a lock file, so of two writers from the same hash exactly
 * one wins. Paths outside the root, symbolic links included, are refused, and the file is read and written
 * in its directory as opened from the root ({@code ConfinedDirectory}), so that a directory
 * swapped for a link after the check does not lead outside it.
 *
 * <p>Imports {@code dev.fence.core} and the JDK only; never picocli, Jackson or {@code dev.fence.cli}.
 */
package dev.fence.files;
