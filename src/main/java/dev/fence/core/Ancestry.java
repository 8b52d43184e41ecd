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
     * {@link #isAncestor}'s answer when it is at hand without real work (a fact already given, a commit
     * whose parent is right there); null when it is not. Never records a question, never fails.
     */
    default Boolean knownAncestor(String ancestor, String descendant) {
        return ancestor.equals(descendant) ? Boolean.TRUE : null;
    }

    /**
     * Called after a decision and before anything it decided is written: throws when some answer given
     * during the decision was provisional (see {@link KnownAncestry#collecting()}), so that nothing is
     * recorded from a decision that may change. The default does nothing: a repository answers for real.
     *
     * @throws KnownAncestry.Needed naming every question that still needs an answer
     */
    default void requireSettled() {}
}
