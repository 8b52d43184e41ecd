package dev.fence.client;

import dev.fence.core.ObjectIds;
import dev.fence.git.Git;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

/**
 * One {@code git push} of one ref with the real {@code git} binary, so that every transport, ssh
 * configuration ({@code ~/.ssh/config}, {@code core.sshCommand}, {@code GIT_SSH_COMMAND}), credential
 * helper, proxy and {@code insteadOf} rewrite works as it does for the user's own {@code git push}.
 *
 * <p>The push always carries an explicit {@code --force-with-lease=<ref>:<expected>}: git's receive-pack
 * compares it under the ref lock, so the push lands only over the expected old id. The per-ref result is
 * read from {@code --porcelain} output (git runs with {@code LC_ALL=C}, so the few reason words it prints
 * are stable), one block per push URL; the push landed only when git also exited 0, since a URL whose
 * transport failed prints no block at all.
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
    /** What a git killed by SIGPIPE exits with (128 + 13). */
    private static final int SIGPIPE_EXIT = 141;

    /** A push may move many objects; a hung transport is stopped after this long. */
    static final Duration TIMEOUT = Duration.ofMinutes(10);

    private static final String NO_PUSH_OPTIONS = "the receiving end does not support push options";

    private static final String PROOF_OPTION = "fence-proof=";

    private static final Pattern PROOF_VALUE = Pattern.compile(Pattern.quote(PROOF_OPTION) + "[^\\s\"']+");

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
     * What one push URL's porcelain block ({@code To <url>} … {@code Done}) said.
     *
     * @param url the URL as git printed it
     * @param ref the pushed ref's status, or null when the block does not name it
     */
    record Block(String url, RefStatus ref) {
        boolean landed() {
            return ref != null && ref.landed();
        }
    }

    /**
     * The outcome of the push.
     *
     * @param exit git's exit code
     * @param urls the push URLs git pushes to, in order (one for a URL destination)
     * @param blocks one per push URL git reported on, in order; a URL whose transport failed has none
     *     (nor has any URL after it: git stops at the first failure)
     * @param remoteLines the remote's messages ({@code remote: } lines), prefixes removed
     * @param stderr git's stderr, without lines that carried the proof
     * @param withOptions the push carried the push options
     */
    record Result(
            int exit,
            List<String> urls,
            List<Block> blocks,
            List<String> remoteLines,
            String stderr,
            boolean withOptions) {
        /**
         * The ref now holds what was pushed at every push URL: git exited 0 and every URL's block reports
         * it updated or up to date. A remote with several push URLs is one remote to the lease: landing at
         * some of them is not landing.
         */
        boolean landed() {
            return exit == 0
                    && blocks.size() >= urls.size()
                    && !blocks.isEmpty()
                    && blocks.stream().allMatch(Block::landed);
        }

        /** The first rejection any URL reported for the ref, preferring {@code stale info}; null if none. */
        RefStatus rejection() {
            RefStatus first = null;
            for (Block b : blocks) {
                if (b.ref() != null && !b.ref().landed()) {
                    if ("REJECTED_REMOTE_CHANGED".equals(b.ref().status())) {
                        return b.ref();
                    }
                    if (first == null) {
                        first = b.ref();
                    }
                }
            }
            return first;
        }

        /** The URLs whose block reports the ref landed. */
        List<String> landedAt() {
            return blocks.stream().filter(Block::landed).map(Block::url).toList();
        }

        /** git stopped at a push URL that takes no push options (only a push with options can). */
        boolean refusedOptions() {
            return withOptions && stderr.contains(NO_PUSH_OPTIONS);
        }
    }

    /**
     * Pushes {@code newSha} to {@code ref} at {@code dest} (a remote name of the clone, or a URL) over
     * {@code expected} ({@link ObjectIds#ZERO}: the ref must not exist). With {@code options}, they are
     * sent as push options; when the only push URL takes none, the push is repeated without them (such a
     * remote runs no fence hook; the expected old id still fences it) unless {@code hooked} says it does.
     * With several push URLs it is not: git stops at the first URL without push options, so whether the
     * others take them is unknown, and a push without the token to a hooked URL would be judged as an
     * unfenced one.
     *
     * @param hooked asked only when the one push URL refused the options: true when fence's hook is known to
     *     guard the ref there (a push without the token would then be judged as a tokenless one)
     */
    static Result push(
            Git git,
            Path clone,
            String dest,
            String ref,
            String newSha,
            String expected,
            List<String> options,
            BooleanSupplier hooked) {
        List<String> urls = pushUrls(git, clone, dest);
        Result r = run(git, clone, dest, urls, ref, newSha, expected, options);
        // git 2.39 can die of SIGPIPE (exit 141) at a push URL where the ref is already up to date and push
        // options were negotiated: it writes the options after receive-pack, given no command, has hung up.
        // Pushing again is safe: the expected old id is the same, so a URL the first try reached is up to
        // date now and one it did not reach is pushed under the same lease.
        for (int retry = 0; retry < 2 && r.exit() == SIGPIPE_EXIT; retry++) {
            r = run(git, clone, dest, urls, ref, newSha, expected, options);
        }
        if (!options.isEmpty()
                && urls.size() == 1
                && r.blocks().isEmpty()
                && r.refusedOptions()
                && !hooked.getAsBoolean()) {
            r = run(git, clone, dest, urls, ref, newSha, expected, List.of());
        }
        return r;
    }

    /** The push URLs of remote {@code dest} ({@code insteadOf} applied), or {@code dest} itself for a URL. */
    private static List<String> pushUrls(Git git, Path clone, String dest) {
        Git.Result r = git.run(clone, "remote", "get-url", "--push", "--all", "--", dest);
        if (r.exit() != 0) {
            return List.of(dest);
        }
        List<String> urls = new ArrayList<>();
        for (String line : r.stdout().split("\n")) {
            if (!line.isBlank()) {
                urls.add(line.strip());
            }
        }
        return urls.isEmpty() ? List.of(dest) : List.copyOf(urls);
    }

    private static Result run(
            Git git,
            Path clone,
            String dest,
            List<String> urls,
            String ref,
            String newSha,
            String expected,
            List<String> options) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("GIT_CONFIG_COUNT", Integer.toString(options.size()));
        for (int i = 0; i < options.size(); i++) {
            config.put("GIT_CONFIG_KEY_" + i, "push.pushOption");
            config.put("GIT_CONFIG_VALUE_" + i, options.get(i));
        }
        String lease = "--force-with-lease=" + ref + ":" + (ObjectIds.isZero(expected) ? "" : expected);
        Git.Result r = git.without(GitPush::traces)
                .withEnv(config)
                .withTimeout(TIMEOUT)
                .run(clone, "push", "--porcelain", "--no-verify", lease, "--", dest, newSha + ":" + ref);
        String stderr = withoutSecrets(r.stderr(), options);
        return new Result(
                r.exit(),
                urls,
                blocks(withoutSecrets(r.stdout(), options), ref),
                remoteLines(stderr),
                stderr,
                !options.isEmpty());
    }

    /**
     * git's tracing writes the protocol (push options included, so the proof) to stderr or a file: none of
     * it reaches this push, whatever the caller's environment says.
     */
    static boolean traces(String name) {
        return name.startsWith("GIT_TRACE") || name.equals("GIT_CURL_VERBOSE");
    }

    /**
     * {@code text} without the lines that carry a secret push option's value ({@code fence-proof=}), and
     * with any {@code fence-proof=} value left redacted: git's output is relayed to the holder (and
     * through {@code fence mcp} to the model), and the proof must never be.
     */
    static String withoutSecrets(String text, List<String> options) {
        if (text == null || text.isEmpty()) {
            return text == null ? "" : text;
        }
        List<String> secrets = new ArrayList<>();
        for (String o : options) {
            if (o.startsWith(PROOF_OPTION) && o.length() > PROOF_OPTION.length()) {
                secrets.add(o.substring(PROOF_OPTION.length()));
            }
        }
        StringBuilder out = new StringBuilder();
        for (String line : text.split("(?<=\n)")) {
            if (secrets.stream().noneMatch(line::contains)) {
                out.append(PROOF_VALUE.matcher(line).replaceAll(PROOF_OPTION + "<redacted>"));
            }
        }
        return out.toString();
    }

    /** The porcelain blocks of {@code porcelain}: one per push URL git reported on, with {@code ref}'s status. */
    static List<Block> blocks(String porcelain, String ref) {
        List<Block> out = new ArrayList<>();
        String url = null;
        StringBuilder block = new StringBuilder();
        for (String line : porcelain.split("\n")) {
            if (line.startsWith("To ")) {
                if (url != null) {
                    out.add(new Block(url, refStatus(block.toString(), ref)));
                }
                url = line.substring(3).strip();
                block.setLength(0);
            } else if (url != null) {
                block.append(line).append('\n');
            }
        }
        if (url != null) {
            out.add(new Block(url, refStatus(block.toString(), ref)));
        }
        return out;
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
