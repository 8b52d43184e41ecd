package dev.fence.hook;

import dev.fence.core.FencePolicy;
import java.util.Map;

/**
 * {@code GIT_NAMESPACE}: one repository served as several (git-http-backend or an ssh forced command
 * setting it per tenant), each namespace's refs stored under {@code refs/namespaces/<name>/} and shown to
 * its pushers without that prefix. A hook sees the refs as the pusher named them, so {@code
 * refs/heads/main} of every namespace arrives under one name; fence keeps them apart by the repo id
 * ({@link #repoId}) and reads a ref's tip by its stored name ({@link #prefix}).
 *
 * <p>Stateless and thread-safe.
 */
final class GitNamespace {
    private GitNamespace() {}

    /** The namespace of {@code env}, its components joined by {@code /} as git reads them; empty for none. */
    static String of(Map<String, String> env) {
        String ns = env.get("GIT_NAMESPACE");
        if (ns == null || ns.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        for (String part : ns.split("/")) {
            if (!part.isEmpty()) {
                out.append(out.length() == 0 ? "" : "/").append(part);
            }
        }
        return out.toString();
    }

    /**
     * Where the refs of namespace {@code ns} ({@link #of}'s form) are stored, as git's {@code
     * expand_namespace}: each component becomes {@code refs/namespaces/<component>/}; empty for no namespace.
     */
    static String prefix(String ns) {
        return ns.isEmpty() ? "" : "refs/namespaces/" + ns.replace("/", "/refs/namespaces/") + "/";
    }

    /**
     * {@code ref} as git stores a namespace's refs, split back ({@link #prefix}'s inverse): the namespace
     * ({@link #of}'s form, empty for none) and the ref inside it. {@code
     * refs/namespaces/t1/refs/namespaces/t2/refs/heads/main} is {@code {"t1/t2", "refs/heads/main"}}.
     */
    static String[] split(String ref) {
        String inner = ref;
        StringBuilder ns = new StringBuilder();
        while (inner.startsWith("refs/namespaces/")) {
            String rest = inner.substring("refs/namespaces/".length());
            int slash = rest.indexOf('/');
            if (slash <= 0) {
                break;
            }
            ns.append(ns.length() == 0 ? "" : "/").append(rest, 0, slash);
            inner = rest.substring(slash + 1);
        }
        return new String[] {ns.toString(), inner};
    }

    /**
     * True when {@code ref} is stored in a git namespace ({@link #split}) and the ref it is there, a ref
     * under {@code refs/}, is one {@code policy} fences: {@code refs/namespaces/t1/refs/heads/main} is {@code
     * main} of namespace {@code t1}. Writing such a name from outside its namespace writes that branch, which
     * fence leases, judges and records only as {@code <repo id>//t1}; no pattern matches the stored name.
     *
     * @param ignoreCase also when only another spelling of the inner ref is fenced ({@link
     *     FencePolicy#isFencedIgnoringCase}), for a repository that ignores case
     */
    static boolean fencedInside(String ref, FencePolicy policy, boolean ignoreCase) {
        if (!ref.startsWith("refs/namespaces/")) {
            return false;
        }
        String[] stored = split(ref);
        String inner = stored[1];
        return !stored[0].isEmpty()
                && inner.startsWith("refs/")
                && (policy.isFenced(inner) || (ignoreCase && policy.isFencedIgnoringCase(inner)));
    }

    /**
     * The repo id fence names a namespaced push's resources after: {@code <repo id>//<namespace>}, so that
     * {@code refs/heads/main} of two namespaces are two resources (two leases, two records), as they are
     * two branches; {@code repoId} itself without a namespace.
     */
    static String repoId(String repoId, String ns) {
        return ns.isEmpty() ? repoId : repoId + "//" + ns;
    }
}
