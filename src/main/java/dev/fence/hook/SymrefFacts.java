package dev.fence.hook;

import dev.fence.core.Printable;
import dev.fence.core.RefUpdate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The symbolic refs of a push, as facts a hook measured in its repository and sent to {@code fence serve}
 * (which cannot see the repository), and the resolver the server judges them with ({@link
 * SymbolicRefs#screen}). The one definition of the format; the curl shim writes the same text.
 *
 * <p>One fact per pushed name that is a symbolic ref: {@value #CHAIN} {@code <ref> <target> [<target>...]}
 * (the targets in the order git follows them, at most {@value SymbolicRefs#MAX_DEPTH}), or {@value
 * #PROBLEM} {@code <ref> <problem>} when git cannot resolve it (a loop, too many levels, a target that is
 * no valid ref name). Names are separated by single spaces (ref names hold none).
 *
 * <p>The server uses only facts about names the push updates; a fact about any other name is ignored, so
 * no fact can refuse a push that updates no symbolic ref. A fact it cannot read, or two facts about the
 * same name, make that name one that cannot be resolved: refused, never let through.
 */
public final class SymrefFacts implements SymbolicRefs.Resolver {
    /** The form field (and, pluralised, the JSON array) of a resolution. */
    public static final String CHAIN = "symref";

    /** The form field of a symbolic ref git cannot resolve. */
    public static final String PROBLEM = "symref-problem";

    private static final int MAX_PROBLEM = 200;

    private final Map<String, SymbolicRefs.Resolution> byRef;

    private SymrefFacts(Map<String, SymbolicRefs.Resolution> byRef) {
        this.byRef = byRef;
    }

    /** The fact that says how {@code r} resolves, as sent: {@code <ref> <target>...} or the problem. */
    public static String field(SymbolicRefs.Resolution r) {
        if (r.problem() != null) {
            return r.names().get(0) + " " + r.problem();
        }
        return String.join(" ", r.names());
    }

    /** The facts for the pushed names among {@code updates} that are symbolic refs in {@code refs}. */
    public static Map<String, List<String>> measure(SymbolicRefs refs, List<RefUpdate> updates) {
        List<String> chains = new ArrayList<>(0);
        List<String> problems = new ArrayList<>(0);
        for (String ref : refs.symbolic(updates)) {
            SymbolicRefs.Resolution r = refs.resolve(ref);
            (r.problem() != null ? problems : chains).add(field(r));
        }
        return Map.of(CHAIN, chains, PROBLEM, problems);
    }

    /**
     * The resolver for facts as sent.
     *
     * @param chains the {@value #CHAIN} facts
     * @param problems the {@value #PROBLEM} facts
     * @throws IllegalArgumentException when a fact names no ref at all
     */
    public static SymrefFacts parse(List<String> chains, List<String> problems) {
        Map<String, SymbolicRefs.Resolution> byRef = new HashMap<>();
        for (String c : chains) {
            String[] parts = c.strip().split(" ", -1);
            String ref = ref(parts[0]);
            SymbolicRefs.Resolution r;
            if (parts.length < 2) {
                r = new SymbolicRefs.Resolution(List.of(ref), "the hook's answer names no target");
            } else if (parts.length > SymbolicRefs.MAX_DEPTH + 1) {
                r = new SymbolicRefs.Resolution(
                        List.of(ref), "more than " + SymbolicRefs.MAX_DEPTH + " levels of symbolic refs, or a loop");
            } else {
                r = new SymbolicRefs.Resolution(List.of(parts), null);
                for (String target : parts) {
                    if (!SymbolicRefs.isSafeRefName(target)) {
                        r = new SymbolicRefs.Resolution(List.of(ref), "its target is not a valid ref name");
                        break;
                    }
                }
            }
            add(byRef, ref, r);
        }
        for (String p : problems) {
            String s = p.strip();
            int space = s.indexOf(' ');
            String ref = ref(space < 0 ? s : s.substring(0, space));
            String problem = space < 0 ? "" : s.substring(space + 1).strip();
            add(
                    byRef,
                    ref,
                    new SymbolicRefs.Resolution(
                            List.of(ref),
                            problem.isEmpty() ? "it cannot be resolved" : Printable.escape(problem, MAX_PROBLEM)));
        }
        return new SymrefFacts(byRef);
    }

    @Override
    public SymbolicRefs.Resolution resolve(String ref) {
        return byRef.get(ref);
    }

    private static String ref(String name) {
        if (name.isEmpty()) {
            throw new IllegalArgumentException(
                    "symref facts are '<ref> <target>...' and symref-problem facts '<ref> <problem>'");
        }
        return name;
    }

    private static void add(Map<String, SymbolicRefs.Resolution> byRef, String ref, SymbolicRefs.Resolution r) {
        if (byRef.putIfAbsent(ref, r) != null) {
            byRef.put(ref, new SymbolicRefs.Resolution(List.of(ref), "the hook sent two answers for it"));
        }
    }
}
