package dev.fence.core;

import java.util.HashMap;
import java.util.Map;

/**
 * Ancestry from facts a remote caller measured in its own repository (a hook shim talking to {@code
 * fence serve}, which has no copy of the repository). A question whose answer is not among the facts
 * throws {@link Needed}; the server asks the caller for it, and the caller repeats the request with the
 * answer added. Identical questions are answered from the facts without asking again.
 */
public final class KnownAncestry implements Ancestry {
    private final Map<String, Boolean> facts = new HashMap<>();

    /** Records that {@code ancestor} is (or is not) an ancestor of {@code descendant}. */
    public KnownAncestry fact(String ancestor, String descendant, boolean isAncestor) {
        facts.put(key(ancestor, descendant), isAncestor);
        return this;
    }

    @Override
    public boolean isAncestor(String ancestor, String descendant) {
        if (ancestor.equals(descendant)) {
            return true;
        }
        Boolean known = facts.get(key(ancestor, descendant));
        if (known == null) {
            throw new Needed(ancestor, descendant);
        }
        return known;
    }

    private static String key(String a, String d) {
        return a + ' ' + d;
    }

    /** The caller must answer "is {@code ancestor} an ancestor of {@code descendant}?" and ask again. */
    public static final class Needed extends FenceException {
        private static final long serialVersionUID = 1L;
        private final String ancestor;
        private final String descendant;

        public Needed(String ancestor, String descendant) {
            super("ancestry of " + ancestor + " and " + descendant + " is needed from the repository");
            this.ancestor = ancestor;
            this.descendant = descendant;
        }

        public String ancestor() {
            return ancestor;
        }

        public String descendant() {
            return descendant;
        }
    }
}
