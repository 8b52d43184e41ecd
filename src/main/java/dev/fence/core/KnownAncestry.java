package dev.fence.core;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Ancestry from facts a remote caller measured in its own repository (a hook shim talking to {@code
 * fence serve}, which has no copy of the repository). The server asks the caller for missing answers,
 * and the caller repeats the request with the answers added. Identical questions are answered from the
 * facts without asking again.
 *
 * <p>Two modes:
 *
 * <ul>
 *   <li>strict ({@code new KnownAncestry()}): a question whose answer is not among the facts throws
 *       {@link Needed} at once;
 *   <li>{@link #collecting()}: a missing answer is recorded and answered provisionally, so that one
 *       decision gathers every question a push raises (one round trip instead of one per ref); {@link
 *       #requireSettled()} then throws {@link Needed} with all of them. {@link AdmissionService} calls it
 *       before writing anything, so a provisional answer never reaches the store.
 * </ul>
 *
 * <p>Not thread-safe: one instance serves one request.
 */
public final class KnownAncestry implements Ancestry {
    /** One question: is {@code ancestor} an ancestor of (or equal to) {@code descendant}? */
    public record Question(String ancestor, String descendant) {}

    private final Map<Question, Boolean> facts = new HashMap<>();
    private final boolean collect;
    private final Set<Question> missing = new LinkedHashSet<>();

    /** Strict: a missing fact throws {@link Needed} immediately. */
    KnownAncestry() {
        this(false);
    }

    private KnownAncestry(boolean collect) {
        this.collect = collect;
    }

    /** Collecting: missing facts are gathered and reported together by {@link #requireSettled()}. */
    public static KnownAncestry collecting() {
        return new KnownAncestry(true);
    }

    /** Records that {@code ancestor} is (or is not) an ancestor of {@code descendant}. */
    public KnownAncestry fact(String ancestor, String descendant, boolean isAncestor) {
        facts.put(new Question(ancestor, descendant), isAncestor);
        return this;
    }

    @Override
    public Boolean knownAncestor(String ancestor, String descendant) {
        return ancestor.equals(descendant) ? Boolean.TRUE : facts.get(new Question(ancestor, descendant));
    }

    @Override
    public boolean isAncestor(String ancestor, String descendant) {
        if (ancestor.equals(descendant)) {
            return true;
        }
        Question q = new Question(ancestor, descendant);
        Boolean known = facts.get(q);
        if (known != null) {
            return known;
        }
        if (!collect) {
            throw new Needed(List.of(q));
        }
        missing.add(q);
        // Provisional: the decision this feeds is thrown away by requireSettled().
        return true;
    }

    @Override
    public void requireSettled() {
        if (!missing.isEmpty()) {
            List<Question> asked = new ArrayList<>(missing);
            missing.clear();
            throw new Needed(asked);
        }
    }

    /** The caller must answer each question and ask again. Nothing was written. */
    public static final class Needed extends FenceException {
        private static final long serialVersionUID = 1L;
        private final transient List<Question> questions;

        public Needed(String ancestor, String descendant) {
            this(List.of(new Question(ancestor, descendant)));
        }

        public Needed(List<Question> questions) {
            super("ancestry is needed from the repository: "
                    + questions.stream()
                            .map(q -> q.ancestor() + " " + q.descendant())
                            .reduce((a, b) -> a + ", " + b)
                            .orElse("(none)"));
            if (questions.isEmpty()) {
                throw new IllegalArgumentException("no questions");
            }
            this.questions = List.copyOf(questions);
        }

        /** Every question, in the order the decision asked them. */
        public List<Question> questions() {
            return questions;
        }

        /** The first question's ancestor. */
        public String ancestor() {
            return questions.get(0).ancestor();
        }

        /** The first question's descendant. */
        public String descendant() {
            return questions.get(0).descendant();
        }
    }
}
