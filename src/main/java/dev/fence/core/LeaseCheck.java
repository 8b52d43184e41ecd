package dev.fence.core;

/** What a store's renew or release did. */
public sealed interface LeaseCheck {

    /** The holder's lease is current; {@code lease} is its state after the operation. */
    record Ok(Lease lease) implements LeaseCheck {}

    /**
     * The presented (holder, token) is not the current grant. Nothing was written.
     *
     * @param latestGranted the resource's counter now
     * @param current the most recent grant now, or null
     */
    record Refused(long latestGranted, Lease current) implements LeaseCheck {}
}
