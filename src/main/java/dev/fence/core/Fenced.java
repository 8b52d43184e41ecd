package dev.fence.core;

/**
 * A FENCED outcome: the presented token may not write. Carries what the message to the agent names.
 *
 * @param resource the resource
 * @param ref the full ref name for git resources, else null
 * @param token the presented token (0 when none)
 * @param current the resource's current token (latest granted)
 * @param reason why
 * @param currentHolder the holder of the current grant, or null when unknown or none
 * @param tip the last admitted write, or null
 * @param detail one extra sentence for the reader, or null
 */
public record Fenced(
        String resource,
        String ref,
        long token,
        long current,
        Reason reason,
        String currentHolder,
        Tip tip,
        String detail) {}
