/**
 * Installs fence's pre-receive hook: into a bare repository for plain git and Gitea, and as files a
 * GitLab or GHES administrator installs (a global server-hook launcher, a per-repo hook tarball, a GHES
 * hook script and hook-environment recipe). Each installer returns an {@link
 * dev.fence.install.InstallResult} saying what it did and what the administrator does next.
 *
 * <p>Installers never overwrite a file fence did not write (one without {@link
 * dev.fence.install.HookScripts#MARKER}) unless forced, and then keep the old file as a backup.
 * Nothing here reads ambient state: the environment arrives as a map and runs the real {@code git}
 * binary found on that map's {@code PATH}. This package may import {@code dev.fence.core} and {@code
 * dev.fence.hook}; it must not import picocli or {@code dev.fence.cli}.
 */
package dev.fence.install;
