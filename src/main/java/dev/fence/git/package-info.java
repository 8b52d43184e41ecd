/**
 * Running the real {@code git} binary: one runner, with the caller's environment less the variables that
 * would point git at another repository. No framework imports; used by the installer and the agent
 * client.
 */
package dev.fence.git;
