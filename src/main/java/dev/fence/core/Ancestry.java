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
}
