package dev.fence.core;

/**
 * Commit ancestry, answered by the repository being pushed to (inside the pre-receive quarantine, so
 * that pushed objects are visible). The admission rule asks only when a decision needs it.
 */
@FunctionalInterface
public interface Ancestry {
    /**
     * True when {@code ancestor} equals {@code descendant} or is reachable from it.
     *
     * @throws FenceException when the repository cannot answer (the push is then refused)
     */
    boolean isAncestor(String ancestor, String descendant);

    /**
     * Called after a decision and before anything it decided is written: throws when some answer given
     * during the decision was provisional (see {@link KnownAncestry#collecting()}), so that nothing is
     * recorded from a decision that may change. The default does nothing: a repository answers for real.
     *
     * @throws KnownAncestry.Needed naming every question that still needs an answer
     */
    default void requireSettled() {}
}
