package dev.fence.hook;

import dev.fence.core.Digests;
import dev.fence.core.EventType;
import dev.fence.core.Landings;
import dev.fence.core.LeaseStore;
import dev.fence.core.PushAttempt;
import dev.fence.core.PushOptions;
import dev.fence.core.RefUpdate;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The post-receive hook: records a {@link EventType#LANDED} event for every fenced ref the push actually
 * updated, with the reason, token and holder of the decision it lands ({@link Landings}), so the ledger
 * agrees with the refs even when two admitted pushes raced and git's own compare-and-swap let only one
 * land. In its own repository on plain git and Gitea it also applies what
 * the pre-receive hook left for the landing ({@link dev.fence.core.Landings}): the last write, and the
 * bump of a tokenless push that supersedes the live lease; the push's admitted updates that did not land
 * get {@link EventType#UNLANDED}. Never fails the push (the refs are already updated): problems become a
 * warning line, and what it could not record the next push's pre-receive hook records.
 */
public final class PostReceiveHook {
    private final Function<String, LeaseStore> openStore;
    private final Clock clock;
    private final Digests digests;

    /** A hook with the JCE's digests. */
    public PostReceiveHook(Function<String, LeaseStore> openStore, Clock clock) {
        this(openStore, clock, Digests.jce());
    }

    /**
     * @param openStore opens the store at a URL; the hook closes what it opens
     * @param clock the clock
     * @param digests names the repository's record files, as the pre-receive hook's do
     */
    public PostReceiveHook(Function<String, LeaseStore> openStore, Clock clock, Digests digests) {
        this.openStore = openStore;
        this.clock = clock;
        this.digests = digests;
    }

    /** Records the landed updates; returns the lines to show (warnings only). */
    public List<String> run(
            Map<String, String> env, Path gitDir, InputStream stdin, Path configFile, String storeOverride) {
        HookConfig config;
        try {
            config = HookConfig.load(gitDir, configFile);
        } catch (RuntimeException e) {
            return List.of("warning: fence could not record the landed push: " + e.getMessage());
        }
        return record(
                config,
                env,
                gitDir,
                stdin,
                storeOverride != null ? storeOverride : config.store().orElse(null));
    }

    /**
     * Records the landed updates under {@code config}, whichever way they arrive (the hook process, or
     * {@code fence serve} for a shim); returns the lines to show (warnings only).
     *
     * @param gitDir the repository, or null when recording remotely (plain git then needs {@code
     *     config.repoId()})
     * @param storeUrl the store URL handed to the store opener
     */
    public List<String> record(
            HookConfig config, Map<String, String> env, Path gitDir, InputStream stdin, String storeUrl) {
        try {
            HookEnvironment where = HookEnvironments.detect(env, gitDir, config);
            List<RefUpdate> updates = new HookInputParser().parse(stdin);
            if (gitDir != null) {
                // A symbolic ref pushed with its target: git skipped its update (see SymbolicRefs).
                updates = SymbolicRefs.of(env, gitDir, config.git())
                        .screen(updates, config.policy())
                        .updates();
            }
            PushOptions options;
            try {
                options = PushOptionsReader.read(env);
            } catch (RuntimeException e) {
                options = PushOptions.none();
            }
            PushAttempt push = where.attempt(options, updates);
            List<String> lines = new ArrayList<>();
            List<RefUpdate> fenced = new ArrayList<>();
            for (RefUpdate u : updates) {
                if (config.policy().isFenced(u.ref())) {
                    fenced.add(u);
                }
            }
            if (LandingRecorder.applies(where.host(), gitDir)) {
                // The pre-receive hook left its admitted updates pending (Landings): these landed.
                try (LeaseStore s = openStore.apply(storeUrl);
                        HostRecord record = HostRecord.lock(
                                gitDir,
                                System.nanoTime()
                                        + config.policy().storeTimeout().toNanos(),
                                digests)) {
                    lines.addAll(LandingRecorder.settle(
                            s,
                            record,
                            PendingLandings.of(gitDir),
                            new GitAncestry(env, gitDir, config.git()),
                            clock,
                            fenced,
                            PendingLandings.receiverPid()));
                    // Every landed update the pre-receive hook admitted was pending: the landings are
                    // recorded here, or by a hook that settled them first, never twice.
                }
            } else if (!fenced.isEmpty()) {
                // Each decision took effect when it was made: the landing records it.
                try (LeaseStore s = openStore.apply(storeUrl)) {
                    Landings.landedAsDecided(s, push, fenced, clock.instant());
                }
            }
            return lines;
        } catch (RuntimeException e) {
            return List.of("warning: fence could not record the landed push: " + e.getMessage());
        }
    }
}
