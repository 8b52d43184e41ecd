package dev.fence.integrate;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Whether one simple command is a {@code git push} the Bash guard refuses (see {@link ClaudeCodeHooks#guardBash}). */
final class GitPushCheck {
    /** Commands that run the command after them. */
    private static final Set<String> WRAPPERS = Set.of("sudo", "command", "env", "exec", "nohup", "time", "builtin");

    /** git's options before the subcommand that take the next word as their value. */
    private static final Set<String> GIT_VALUE_OPTIONS =
            Set.of("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path");

    /** git push's options that take the next word as their value. */
    private static final Set<String> PUSH_VALUE_OPTIONS =
            Set.of("-o", "--push-option", "--repo", "--receive-pack", "--exec", "--recurse-submodules");

    private GitPushCheck() {}

    static Optional<String> refusal(List<String> words) {
        int i = 0;
        while (i < words.size() && (isAssignment(words.get(i)) || WRAPPERS.contains(words.get(i)))) {
            i++;
        }
        if (i >= words.size() || !isGit(words.get(i))) {
            return Optional.empty();
        }
        i++;
        while (i < words.size() && words.get(i).startsWith("-")) {
            String w = words.get(i);
            i += GIT_VALUE_OPTIONS.contains(w) ? 2 : 1;
        }
        if (i >= words.size() || !words.get(i).equals("push")) {
            return Optional.empty();
        }
        boolean dryRun = false;
        boolean force = false;
        boolean leaseWithSha = false;
        boolean allBranches = false;
        boolean tags = false;
        List<String> positional = new ArrayList<>();
        for (i++; i < words.size(); i++) {
            String w = words.get(i);
            if (w.equals("--")) {
                positional.addAll(words.subList(i + 1, words.size()));
                break;
            }
            if (PUSH_VALUE_OPTIONS.contains(w)) {
                i++;
            } else if (w.equals("--dry-run")) {
                dryRun = true;
            } else if (w.equals("--force") || w.equals("--mirror")) {
                force = true;
                allBranches |= w.equals("--mirror");
            } else if (w.startsWith("--force-with-lease")) {
                int colon = w.indexOf(':');
                if (w.startsWith("--force-with-lease=") && colon > 0 && colon < w.length() - 1) {
                    leaseWithSha = true;
                } else {
                    force = true;
                }
            } else if (w.equals("--all") || w.equals("--branches")) {
                allBranches = true;
            } else if (w.equals("--tags")) {
                tags = true;
            } else if (w.startsWith("--")) {
                // other long options change nothing fence cares about
            } else if (w.startsWith("-") && w.length() > 1) {
                force |= w.indexOf('f') > 0;
                dryRun |= w.indexOf('n') > 0;
                if (w.endsWith("o")) {
                    i++;
                }
            } else {
                positional.add(w);
            }
        }
        if (dryRun) {
            return Optional.empty();
        }
        List<String> refspecs = positional.isEmpty() ? List.of() : positional.subList(1, positional.size());
        boolean plusSpec = refspecs.stream().anyMatch(r -> r.startsWith("+"));
        boolean tagsOnly =
                !allBranches && (refspecs.isEmpty() ? tags : refspecs.stream().allMatch(GitPushCheck::isTag));
        String shown = String.join(" ", words);
        if (!tagsOnly) {
            return Optional.of("fence: blocked '" + shown + "': branches on this remote are fenced, and git push"
                    + " carries no lease token, so the remote's hook would refuse it or it could overwrite another"
                    + " agent's work.");
        }
        if ((force || plusSpec) && !leaseWithSha) {
            return Optional.of("fence: blocked '" + shown + "': a forced push must name the expected old SHA"
                    + " (--force-with-lease=<ref>:<sha>); --force, -f, +refspec and a bare --force-with-lease"
                    + " overwrite whatever is there.");
        }
        return Optional.empty();
    }

    private static boolean isTag(String refspec) {
        String r = refspec.startsWith("+") ? refspec.substring(1) : refspec;
        int colon = r.indexOf(':');
        String dst = colon >= 0 ? r.substring(colon + 1) : r;
        String src = colon >= 0 ? r.substring(0, colon) : r;
        return dst.startsWith("refs/tags/") || (dst.isEmpty() && src.startsWith("refs/tags/"));
    }

    private static boolean isGit(String word) {
        return word.equals("git") || word.endsWith("/git");
    }

    private static boolean isAssignment(String word) {
        int eq = word.indexOf('=');
        return eq > 0 && word.substring(0, eq).matches("[A-Za-z_][A-Za-z0-9_]*");
    }
}
