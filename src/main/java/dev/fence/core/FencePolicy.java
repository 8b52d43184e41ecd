package dev.fence.core;

import java.time.Duration;
import java.util.List;

/**
 * The hook's configuration, as values: which refs are fenced and how tokenless pushes are treated.
 *
 * @param fencedRefs glob patterns of fenced full ref names ({@code refs/heads/**}); {@code *} matches
 *     within one path segment, {@code **} across segments
 * @param pusherPolicies first matching rule wins; pushers matching none get {@code defaultPolicy}
 * @param defaultPolicy policy for pushers no rule names
 * @param agentPatterns glob patterns of pusher names that always need a token (e.g. {@code bot-*})
 * @param acceptUnfencedWhenStoreDown on-store-down for pushes that touch no fenced ref under a token
 *     requirement: true = accept with a warning (default), false = reject
 * @param storeTimeout the longest the hook waits for the store before failing closed
 * @param holderPushers opt-in: a holder matching a rule's holder glob may push only as a pusher matching
 *     the rule's pusher glob (first matching rule wins; holders no rule names may push as anyone). A proof
 *     is a bearer credential; this binds it to the pushers a holder runs as.
 */
public record FencePolicy(
        List<String> fencedRefs,
        List<PusherRule> pusherPolicies,
        PusherPolicy defaultPolicy,
        List<String> agentPatterns,
        boolean acceptUnfencedWhenStoreDown,
        Duration storeTimeout,
        List<HolderRule> holderPushers) {

    public FencePolicy {
        fencedRefs = List.copyOf(fencedRefs);
        pusherPolicies = List.copyOf(pusherPolicies);
        agentPatterns = List.copyOf(agentPatterns);
        holderPushers = List.copyOf(holderPushers);
    }

    /** A policy without {@code holder-pushers} rules. */
    public FencePolicy(
            List<String> fencedRefs,
            List<PusherRule> pusherPolicies,
            PusherPolicy defaultPolicy,
            List<String> agentPatterns,
            boolean acceptUnfencedWhenStoreDown,
            Duration storeTimeout) {
        this(
                fencedRefs,
                pusherPolicies,
                defaultPolicy,
                agentPatterns,
                acceptUnfencedWhenStoreDown,
                storeTimeout,
                List.of());
    }

    /** A holder glob and the pusher glob its pushes must come from. */
    public record HolderRule(String holderPattern, String pusherPattern) {}

    /** This policy with {@code on-store-down} set to reject. */
    public FencePolicy failingClosed() {
        return new FencePolicy(
                fencedRefs, pusherPolicies, defaultPolicy, agentPatterns, false, storeTimeout, holderPushers);
    }

    /** True unless a {@code holder-pushers} rule names {@code holder} and {@code pusher} does not match it. */
    boolean mayPushFor(String holder, String pusher) {
        for (HolderRule r : holderPushers) {
            if (Globs.matches(r.holderPattern(), holder)) {
                return pusher != null && Globs.matches(r.pusherPattern(), pusher);
            }
        }
        return true;
    }

    /** A pusher glob and the policy it gets. */
    public record PusherRule(String pusherPattern, PusherPolicy policy) {}

    /** Defaults: all branches fenced, {@code bump} for everyone, no agent patterns, accept on store down, 2 s. */
    public static FencePolicy defaults() {
        return new FencePolicy(
                List.of("refs/heads/**"), List.of(), PusherPolicy.BUMP, List.of(), true, Duration.ofSeconds(2));
    }

    /** True when {@code ref} is fenced. */
    public boolean isFenced(String ref) {
        for (String p : fencedRefs) {
            if (Globs.matches(p, ref)) {
                return true;
            }
        }
        return false;
    }

    /**
     * True when {@code ref} is fenced on a repository whose file system ignores case: its fold ({@link
     * RefFolding}) matches a pattern's fold. A ref that is, and is not fenced as spelled ({@link #isFenced}),
     * is another spelling of a fenced ref there.
     */
    public boolean isFencedIgnoringCase(String ref) {
        String folded = RefFolding.fold(ref);
        for (String p : fencedRefs) {
            if (Globs.matches(RefFolding.fold(p), folded)) {
                return true;
            }
        }
        return false;
    }

    /** True when {@code pusher} matches an agent pattern and so always needs a token. */
    public boolean isAgent(String pusher) {
        for (String p : agentPatterns) {
            if (pusher != null && Globs.matches(p, pusher)) {
                return true;
            }
        }
        return false;
    }

    /** The policy for a tokenless push by {@code pusher}. */
    public PusherPolicy policyFor(String pusher) {
        for (PusherRule r : pusherPolicies) {
            if (pusher != null && Globs.matches(r.pusherPattern(), pusher)) {
                return r.policy();
            }
        }
        return defaultPolicy;
    }
}
