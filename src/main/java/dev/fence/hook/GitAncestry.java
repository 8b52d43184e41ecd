package dev.fence.hook;

import dev.fence.core.Ancestry;
import dev.fence.core.InvalidInputException;
import dev.fence.core.ObjectIds;
import dev.fence.core.RefUpdate;
import dev.fence.core.StoreUnavailableException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Ancestry answered by the real {@code git} binary ({@code git merge-base --is-ancestor}), run with the
 * hook's own environment (replace refs turned off) so that {@code GIT_DIR}, {@code GIT_OBJECT_DIRECTORY} and {@code
 * GIT_ALTERNATE_OBJECT_DIRECTORIES} point into the push's quarantine, where the pushed objects are.
 *
 * <p>A separate process costs a few milliseconds and is spent only when the admission rule needs an
 * answer (an update of an existing fenced ref) that the pushed loose commits do not already show ({@link
 * LooseCommits}: a fast-forward of a few commits needs no process); starting JGit in the hook would cost
 * more.
 *
 * <p>Thread-safe. What the loose commits show is remembered, so that a hook can read a push's commits
 * ahead on one thread ({@link #readAhead}) while another judges it.
 */
public final class GitAncestry implements Ancestry {
    private final Map<String, String> env;
    private final Path dir;
    private final String git;
    private final LooseCommits loose;

    /** "ancestor descendant" to whether the loose commits show it; guarded by itself. */
    private final Map<String, Boolean> shown = new HashMap<>();

    /**
     * @param env the environment the hook was started with (passed to git with {@code
     *     GIT_NO_REPLACE_OBJECTS} set)
     * @param dir the directory to run git in (the repository)
     * @param git the git binary ({@link HookConfig#git()}: from the configuration, never the environment,
     *     which on a local-path remote is the pusher's)
     */
    public GitAncestry(Map<String, String> env, Path dir, String git) {
        // Replace refs (refs/replace/*) are refs like any other, which a pusher may write: with them git
        // would answer for the history they substitute, not the one the ref will hold. Every question here
        // is about the objects as pushed, so git and the loose reader both read them with replacements off.
        // (Set where git is started, not in a copy of the environment made for every push.)
        this.env = env;
        this.dir = dir;
        this.git = git;
        this.loose = LooseCommits.of(env, dir, true);
    }

    /** {@inheritDoc} From loose commits (see {@link LooseCommits}); null when they do not show it. */
    @Override
    public Boolean knownAncestor(String ancestor, String descendant) {
        if (!ObjectIds.isValid(ancestor) || !ObjectIds.isValid(descendant)) {
            return null;
        }
        return shows(ancestor, descendant) ? Boolean.TRUE : null;
    }

    /**
     * Reads, from the loose commits, whether each update's old tip is in its new tip's history: the
     * question the admission rule asks of every fast-forward. A one-shot hook calls this on its main
     * thread, which has nothing else to do while the store thread connects; the answers are then at hand
     * when the admission rule asks. Updates that create or delete a ref are skipped. Never throws: what
     * cannot be read now is read again when asked, and reported then.
     */
    public void readAhead(List<RefUpdate> updates) {
        for (RefUpdate u : updates) {
            if (ObjectIds.isValid(u.oldId())
                    && ObjectIds.isValid(u.newId())
                    && !ObjectIds.isZero(u.oldId())
                    && !ObjectIds.isZero(u.newId())) {
                try {
                    shows(u.oldId(), u.newId());
                } catch (RuntimeException e) {
                    // Asked again by the admission rule, which reports it.
                }
            }
        }
    }

    /**
     * {@link LooseCommits#reaches}, read once per question: a second thread asking the same question while
     * the first reads waits for its answer rather than reading again.
     */
    private boolean shows(String ancestor, String descendant) {
        String question = ancestor + ' ' + descendant;
        synchronized (shown) {
            Boolean known = shown.get(question);
            if (known != null) {
                return known;
            }
            boolean answer = loose.reaches(ancestor, descendant);
            shown.put(question, answer);
            return answer;
        }
    }

    /**
     * The id {@code ref} points at now, or the zero id when it does not exist.
     *
     * @throws StoreUnavailableException when git cannot answer
     */
    public String tipOf(String ref) {
        // The stored name (a namespaced push's ref lives under refs/namespaces/), checked as written:
        // show-ref --verify takes no abbreviation, where rev-parse would settle for refs/tags/<ref>.
        String stored = GitNamespace.prefix(GitNamespace.of(env)) + ref;
        ProcessBuilder pb = new ProcessBuilder(git, "show-ref", "--verify", "--hash", "--", stored)
                .directory(dir.toFile())
                .redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.environment().put("GIT_NO_REPLACE_OBJECTS", "1");
        try {
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
            if (!p.waitFor(4, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new StoreUnavailableException("git show-ref did not answer within 4 s");
            }
            if (p.exitValue() == 0 && ObjectIds.isValid(out)) {
                return out;
            }
            return ObjectIds.ZERO;
        } catch (IOException e) {
            throw new StoreUnavailableException("cannot run git to read " + ref + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while reading " + ref);
        }
    }

    @Override
    public boolean isAncestor(String ancestor, String descendant) {
        if (!ObjectIds.isValid(ancestor) || !ObjectIds.isValid(descendant)) {
            throw new InvalidInputException("not an object id: " + ancestor + " / " + descendant);
        }
        if (ancestor.equals(descendant) || shows(ancestor, descendant)) {
            return true;
        }
        ProcessBuilder pb = new ProcessBuilder(git, "merge-base", "--is-ancestor", ancestor, descendant)
                .directory(dir.toFile())
                .redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.environment().put("GIT_NO_REPLACE_OBJECTS", "1");
        // Its messages are read below ("not a valid ..."): in the C locale they are git's own words.
        pb.environment().put("LC_ALL", "C");
        try {
            Process p = pb.start();
            byte[] output = p.getInputStream().readAllBytes();
            if (!p.waitFor(4, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new StoreUnavailableException("git merge-base did not answer within 4 s");
            }
            String said = new String(output).trim();
            return switch (p.exitValue()) {
                case 0 -> true;
                case 1 -> false;
                    // A base commit that no longer exists (rewritten away and collected) is certainly not
                    // in the new tip's history.
                default -> {
                    if (said.toLowerCase(java.util.Locale.ROOT).contains("not a valid")) {
                        yield false;
                    }
                    throw new InvalidInputException("git merge-base --is-ancestor " + ObjectIds.abbreviate(ancestor)
                            + " " + ObjectIds.abbreviate(descendant) + " failed: " + said);
                }
            };
        } catch (IOException e) {
            throw new InvalidInputException("cannot run git to check ancestry: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while checking ancestry");
        }
    }
}
