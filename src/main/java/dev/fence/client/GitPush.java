package dev.fence.client;

import dev.fence.core.ObjectIds;
import dev.fence.git.Git;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@code git push} of one ref with the real {@code git} binary, so that every transport, ssh
 * configuration ({@code ~/.ssh/config}, {@code core.sshCommand}, {@code GIT_SSH_COMMAND}), credential
 * helper, proxy and {@code insteadOf} rewrite works as it does for the user's own {@code git push}.
 *
 * <p>The push always carries an explicit {@code --force-with-lease=<ref>:<expected>}: git's receive-pack
 * compares it under the ref lock, so the push lands only over the expected old id. The per-ref result is
 * read from {@code --porcelain} output, never from the exit code (which is 1 for any rejected ref) or
 * from prose (git runs with {@code LC_ALL=C}, so the few reason words it prints are stable).
 *
 * <p>The clone's own pre-push hook is skipped ({@code --no-verify}), as an embedded client never ran it:
 * that hook is fence's guard against plain {@code git push}, and this push has just made the same checks
 * (and more) itself; run again, it would only add a JVM start and turn FENCED answers into a bare
 * "failed to push".
 *
 * <p>Push options travel as {@code push.pushOption} entries in git's environment ({@code
 * GIT_CONFIG_COUNT}), not as {@code -o} arguments: the proof is a bearer credential, and arguments are in
 * every user's process listing while the environment is readable by its owner only.
 */
final class GitPush {
    /** A push may move many objects; a hung transport is stopped after this long. */
    static final Duration TIMEOUT = Duration.ofMinutes(10);

    private static final String NO_PUSH_OPTIONS = "the receiving end does not support push options";

    private GitPush() {}

    /**
     * What git said about one ref.
     *
     * @param flag the porcelain flag: {@code ' '} fast-forward, {@code '+'} forced, {@code '*'} new,
     *     {@code '-'} deleted, {@code '='} up to date, {@code '!'} rejected
     * @param summary the summary, e.g. {@code [rejected]} or {@code abc..def}
     * @param reason the reason in parentheses, e.g. {@code stale info}, or null
     */
    record RefStatus(char flag, String summary, String reason) {
        /** The ref now holds what was pushed. */
        boolean landed() {
            return flag != '!';
        }

        /** A stable name for the outcome ({@code remoteStatus} in {@code fence push --json}). */
        String status() {
            if (flag == '=') {
                return "UP_TO_DATE";
            }
            if (flag != '!') {
                return "OK";
            }
            if ("[rejected]".equals(summary)) {
                if ("stale info".equals(reason)) {
                    return "REJECTED_REMOTE_CHANGED";
                }
                if ("non-fast-forward".equals(reason) || "fetch first".equals(reason)) {
                    return "REJECTED_NONFASTFORWARD";
                }
            }
            return "REJECTED_OTHER_REASON";
        }
    }

    /**
     * The outcome of the push.
     *
     * @param ref what git reported for the pushed ref, or null when it reported nothing (the transport
     *     failed: {@code stderr} says why)
     * @param remoteLines the remote's messages ({@code remote: } lines), prefixes removed
     * @param withOptions the push carried the push options
     */
    record Result(int exit, RefStatus ref, List<String> remoteLines, String stderr, boolean withOptions) {}

    /**
     * Pushes {@code newSha} to {@code ref} at {@code dest} (a remote name of the clone, or a URL) over
     * {@code expected} ({@link ObjectIds#ZERO}: the ref must not exist). With {@code options}, they are
     * sent as push options, and the push is repeated without them when the remote takes none (such a
     * remote runs no fence hook; the expected old id still fences it).
     */
    static Result push(
            Git git, Path clone, String dest, String ref, String newSha, String expected, List<String> options) {
        Result r = run(git, clone, dest, ref, newSha, expected, options);
        if (!options.isEmpty() && r.ref() == null && r.stderr().contains(NO_PUSH_OPTIONS)) {
            r = run(git, clone, dest, ref, newSha, expected, List.of());
        }
        return r;
    }

    private static Result run(
            Git git, Path clone, String dest, String ref, String newSha, String expected, List<String> options) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("GIT_CONFIG_COUNT", Integer.toString(options.size()));
        for (int i = 0; i < options.size(); i++) {
            config.put("GIT_CONFIG_KEY_" + i, "push.pushOption");
            config.put("GIT_CONFIG_VALUE_" + i, options.get(i));
        }
        String lease = "--force-with-lease=" + ref + ":" + (ObjectIds.isZero(expected) ? "" : expected);
        Git.Result r = git.withEnv(config)
                .withTimeout(TIMEOUT)
                .run(clone, "push", "--porcelain", "--no-verify", lease, dest, newSha + ":" + ref);
        return new Result(
                r.exit(), refStatus(r.stdout(), ref), remoteLines(r.stderr()), r.stderr(), !options.isEmpty());
    }

    /**
     * The porcelain line of {@code ref}: {@code <flag> TAB <from>:<to> TAB <summary> [(<reason>)]}. A
     * remote with several push URLs reports the ref once per URL; the push landed only if it landed at
     * every one, so the first rejection wins.
     */
    static RefStatus refStatus(String porcelain, String ref) {
        RefStatus found = null;
        for (String line : porcelain.split("\n")) {
            String[] parts = line.split("\t", 3);
            if (parts.length < 3 || parts[0].length() != 1 || !parts[1].endsWith(":" + ref)) {
                continue;
            }
            String rest = parts[2].strip();
            String summary = rest;
            String reason = null;
            int open = rest.indexOf(" (");
            if (open >= 0 && rest.endsWith(")")) {
                summary = rest.substring(0, open);
                reason = rest.substring(open + 2, rest.length() - 1);
            }
            RefStatus s = new RefStatus(parts[0].charAt(0), summary, reason);
            if (found == null || (found.landed() && !s.landed())) {
                found = s;
            }
        }
        return found;
    }

    /** The remote's message lines without transport prefixes ({@code remote: }, GitLab's {@code GL-HOOK-ERR: }). */
    static List<String> remoteLines(String stderr) {
        List<String> out = new ArrayList<>();
        if (stderr == null) {
            return out;
        }
        for (String raw : stderr.split("\r?\n|\r")) {
            if (!raw.startsWith("remote:")) {
                continue;
            }
            String line = raw;
            boolean stripped = true;
            while (stripped) {
                stripped = false;
                for (String prefix : new String[] {"remote: ", "remote:", "GL-HOOK-ERR: ", "GL-HOOK-ERR:"}) {
                    if (line.startsWith(prefix)) {
                        line = line.substring(prefix.length());
                        stripped = true;
                    }
                }
            }
            line = line.stripTrailing();
            if (!line.isEmpty()) {
                out.add(line);
            }
        }
        return out;
    }

    /** git's own lines of {@code stderr} (not the remote's), for a transport failure's message. */
    static List<String> gitLines(String stderr) {
        List<String> out = new ArrayList<>();
        for (String raw : stderr.split("\r?\n|\r")) {
            String line = raw.stripTrailing();
            if (!line.isEmpty() && !line.startsWith("remote:")) {
                out.add(line);
            }
        }
        return out;
    }
}
