package dev.fence.core;

/** What {@link LeaseStore#commit} did. */
public sealed interface CommitResult {
    /** Every write and event was applied. */
    record Committed() implements CommitResult {}

    /** {@code resource} changed since its snapshot; nothing at all was written. */
    record Conflict(String resource) implements CommitResult {}
}
