package dev.fence.core;

/**
 * The git host's own record of one fenced ref's resource, kept with the repository and not in the lease store: the
 * highest token a push to the ref was admitted under, and the holder that token was proven to belong to.
 * A store that lost or rolled back its data cannot lower it, so a push at or below it from another holder
 * is refused whatever the store says, and a store whose counter is below it is found out.
 *
 * @param resource the ref's resource (repo id and full ref name): tokens count per resource, so a ref
 *     whose repo id changed starts a record of its own
 * @param token the highest token admitted on the ref (a bump's token for a tokenless push)
 * @param holder the holder proven for {@code token}, or null when it was a bump
 */
public record AcceptedMark(String resource, long token, String holder) {}
