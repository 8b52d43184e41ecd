package dev.fence.core;

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
        return decisions.stream().noneMatch(d -> d instanceof RefDecision.Refused);
    }

    /** The refusals, in input order. */
    public List<RefDecision.Refused> refusals() {
        return decisions.stream()
                .filter(d -> d instanceof RefDecision.Refused)
                .map(d -> (RefDecision.Refused) d)
                .toList();
    }
}
