package dev.fence.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The hook's decision on a whole push: accepted only if no ref is refused (pre-receive is all-or-nothing).
 *
 * @param decisions one per input line, in input order
 * @param warnings lines to show the pusher even when accepted (e.g. store down, accepted by policy)
 */
public record Verdict(List<RefDecision> decisions, List<String> warnings) {
    public Verdict {
        decisions = List.copyOf(decisions);
        warnings = List.copyOf(warnings);
    }

    public boolean accepted() {
        for (RefDecision d : decisions) {
            if (d instanceof RefDecision.Refused) {
                return false;
            }
        }
        return true;
    }

    /** The refusals, in input order. */
    public List<RefDecision.Refused> refusals() {
        List<RefDecision.Refused> out = new ArrayList<>();
        for (RefDecision d : decisions) {
            if (d instanceof RefDecision.Refused r) {
                out.add(r);
            }
        }
        return Collections.unmodifiableList(out);
    }
}
