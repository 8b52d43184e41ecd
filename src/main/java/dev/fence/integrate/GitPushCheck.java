package dev.fence.integrate;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/** Whether one simple command is a {@code git push} the Bash guard refuses (see {@link ClaudeCodeHooks#guardBash}). */
final class GitPushCheck {
    /** Commands that run the command after them. */
    private static final Set<String> WRAPPERS = Set.of("sudo", "command", "env", "exec", "nohup", "time", "builtin");

    /** git's options before the subcommand that take the next word as their value. */
    private static final Set<String> GIT_VALUE_OPTIONS =
            Set.of("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path");

    private GitPushCheck() {}

    /** A word that names git or a push, wherever it is: what makes a line worth a closer look. */
    private static final Pattern MENTIONS_GIT = Pattern.compile("(^|[^A-Za-z0-9_-])git($|[^A-Za-z0-9_])");

    private static final Pattern MENTIONS_PUSH = Pattern.compile("push|send-pack");

    /**
     * Programs that run nothing they are given (they print, search or change directory): a line of them
     * that mentions {@code git push} does not push.
     */
    private static final Set<String> INERT = Set.of(
            "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "cat", "head", "tail", "less", "more", "wc", "sort",
            "uniq", "cut", "tr", "man", "cd", "pushd", "popd", "ls", "pwd", "true", "false", "test", "[", "[[", "mkdir",
            "touch");

    /**
     * git's commands that push nothing and run no command of the caller's: any other (an alias, {@code
     * send-pack}, {@code subtree}, {@code submodule foreach}, {@code rebase -x}, {@code config}) cannot
     * be told apart from a push when the line mentions one.
     */
    private static final Set<String> GIT_SAFE = Set.of(
            "status",
            "log",
            "diff",
            "show",
            "add",
            "commit",
            "fetch",
            "pull",
            "merge",
            "checkout",
            "switch",
            "branch",
            "tag",
            "stash",
            "reset",
            "restore",
            "rm",
            "mv",
            "grep",
            "blame",
            "remote",
            "init",
            "clone",
            "cherry-pick",
            "revert",
            "describe",
            "rev-parse",
            "rev-list",
            "ls-remote",
            "ls-files",
            "for-each-ref",
            "shortlog",
            "format-patch",
            "am",
            "apply",
            "reflog",
            "fsck",
            "cat-file",
            "show-ref",
            "help",
            "version",
            "merge-base",
            "range-diff",
            "whatchanged",
            "name-rev",
            "notes",
            "worktree");

    /**
     * Why the command line {@code commands} (as {@link BashWords} cut it) must not run, or empty. A {@code
     * git push} written out is judged by its options and refspecs; a line that mentions git and a push
     * anywhere else is refused unless every command in it is clearly harmless ({@code fence push}, a git
     * command that pushes nothing, a program that runs nothing), because a push hidden behind an
     * interpreter, a wrapper's options, a variable, an alias or a pipe cannot be followed by a parser.
     */
    static Optional<String> refusal(String line, List<List<String>> commands) {
        commands = commands.stream().map(GitPushCheck::undashed).toList();
        for (List<String> words : commands) {
            Optional<String> why = refusal(words);
            if (why.isPresent()) {
                return why;
            }
        }
        if (!MENTIONS_GIT.matcher(line).find() || !MENTIONS_PUSH.matcher(line).find()) {
            return Optional.empty();
        }
        for (List<String> words : commands) {
            if (!clearlyNoPush(words)) {
                return Optional.of("fence: blocked '" + String.join(" ", words) + "': this line mentions git and"
                        + " a push, and fence cannot tell whether '" + words.get(0) + "' runs one (another shell,"
                        + " eval, xargs, a wrapper's options, a variable, an alias or git's other pushing commands"
                        + " hide it), so it blocks it; branches on this remote are fenced.");
            }
        }
        return Optional.empty();
    }

    private static boolean clearlyNoPush(List<String> words) {
        int i = 0;
        while (i < words.size() && isAssignment(words.get(i))) {
            i++;
        }
        if (i >= words.size()) {
            return true;
        }
        String program = words.get(i);
        List<String> rest = words.subList(i + 1, words.size());
        if (isFence(program)) {
            // fence push carries the token; fence exec runs a command, which may be a git push.
            return rest.stream().noneMatch(w -> MENTIONS_GIT.matcher(w).find());
        }
        if (INERT.contains(program)) {
            return true;
        }
        if (!isGit(program)) {
            return false;
        }
        int j = gitSubcommand(words, i + 1);
        if (j < 0) {
            return false;
        }
        for (String w : words.subList(i + 1, j)) {
            if (MENTIONS_PUSH.matcher(w).find()) {
                // -c alias.p=push, --config-env and the like
                return false;
            }
        }
        // A push written out was judged by its options and refspecs before this.
        return words.get(j).equals("push") || GIT_SAFE.contains(words.get(j));
    }

    /** The index of git's subcommand after its global options from {@code from}, or -1 when there is none. */
    private static int gitSubcommand(List<String> words, int from) {
        int i = from;
        while (i < words.size() && words.get(i).startsWith("-")) {
            String w = words.get(i);
            i += GIT_VALUE_OPTIONS.contains(w) ? 2 : 1;
        }
        return i < words.size() ? i : -1;
    }

    /**
     * {@code words} with a dashed git program ({@code /usr/lib/git-core/git-push}, {@code git-send-pack})
     * as {@code git <command>}, which is what it runs.
     */
    private static List<String> undashed(List<String> words) {
        int i = 0;
        while (i < words.size() && (isAssignment(words.get(i)) || WRAPPERS.contains(words.get(i)))) {
            i++;
        }
        if (i >= words.size()) {
            return words;
        }
        String program = words.get(i);
        String base = program.substring(program.lastIndexOf('/') + 1);
        if (!base.startsWith("git-") || base.length() == 4) {
            return words;
        }
        List<String> out = new ArrayList<>(words.subList(0, i));
        out.add("git");
        out.add(base.substring(4));
        out.addAll(words.subList(i + 1, words.size()));
        return out;
    }

    private static boolean isFence(String word) {
        return word.equals("fence") || word.endsWith("/fence");
    }

    static Optional<String> refusal(List<String> words) {
        int i = 0;
        while (i < words.size() && (isAssignment(words.get(i)) || WRAPPERS.contains(words.get(i)))) {
            i++;
        }
        if (i >= words.size() || !isGit(words.get(i))) {
            return Optional.empty();
        }
        i = gitSubcommand(words, i + 1);
        if (i < 0 || !words.get(i).equals("push")) {
            return Optional.empty();
        }
        String shown = String.join(" ", words);
        GitPushArgs.Reading reading = GitPushArgs.read(words.subList(i + 1, words.size()));
        if (reading instanceof GitPushArgs.Help) {
            return Optional.empty();
        }
        if (reading instanceof GitPushArgs.Unjudged u) {
            // git would refuse the line and push nothing, but a guard that guesses at a reading git does not
            // share is how pushes got past it: block instead.
            return Optional.of("fence: blocked '" + shown + "': fence reads git push's options as git does and"
                    + " cannot judge this one (" + u.why() + "); write git's options out in full; branches on this"
                    + " remote are fenced.");
        }
        GitPushArgs.Push push = (GitPushArgs.Push) reading;
        if (push.dryRun()) {
            return Optional.empty();
        }
        List<String> positional = push.arguments();
        boolean allBranches = push.allBranches();
        boolean tags = push.tags();
        boolean plainForce = push.force();
        boolean force = plainForce || push.leaseTracking();
        boolean leaseWithSha = push.leaseExplicit();
        List<String> refspecs = positional.isEmpty() ? List.of() : positional.subList(1, positional.size());
        boolean plusSpec = refspecs.stream().anyMatch(r -> r.startsWith("+"));
        boolean tagsOnly =
                !allBranches && (refspecs.isEmpty() ? tags : refspecs.stream().allMatch(GitPushCheck::isTag));
        if (!tagsOnly) {
            return Optional.of("fence: blocked '" + shown + "': branches on this remote are fenced, and git push"
                    + " carries no lease token, so the remote's hook would refuse it or it could overwrite another"
                    + " agent's work.");
        }
        // --force and +refspec override any lease: only --force-with-lease=<ref>:<sha> on its own names what is
        // overwritten.
        if (plainForce || plusSpec || (force && !leaseWithSha)) {
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
