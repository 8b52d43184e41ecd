package dev.fence.doctor;

import dev.fence.core.CommitResult;
import dev.fence.core.ConfigException;
import dev.fence.core.FenceException;
import dev.fence.core.Identities;
import dev.fence.core.LeaseStore;
import dev.fence.core.ResourceState;
import dev.fence.core.ResourceWrite;
import dev.fence.core.StoreIdentity;
import dev.fence.core.StoreUnavailableException;
import dev.fence.store.StoreOptions;
import dev.fence.store.StoreSetup;
import dev.fence.store.Stores;
import java.nio.file.Files;
import java.nio.file.attribute.UserPrincipal;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The store's checks: its set-up ({@code redis.role}, {@code redis.eviction}, {@code redis.persistence},
 * {@code redis.replicas}; {@code sqlite.file}, {@code sqlite.others}; {@code postgres.synchronous_commit},
 * {@code postgres.synchronous_standby_names}) and, for {@code fence doctor}, whether it answers and takes a
 * write ({@code store.reachable}, {@code store.writable}).
 *
 * <p>The write is ledger-free and harmless: the probe resource {@value #PROBE} is written back as it was
 * read, which raises only its version. A SQLite file that does not exist yet is not created (the user
 * running the check may not be the one the hooks run as): only its directory is judged.
 */
public final class StoreChecks implements Check {
    static final String REACHABLE = "store.reachable";
    static final String WRITABLE = "store.writable";
    static final String SETUP = "store.setup";
    public static final String ROLE = "redis.role";
    static final String EVICTION = "redis.eviction";
    static final String PERSISTENCE = "redis.persistence";
    static final String REPLICAS = "redis.replicas";
    /** The prefix of a PostgreSQL setting's check, e.g. {@code postgres.synchronous_commit}. */
    static final String POSTGRES = "postgres.";

    static final String SQLITE = "sqlite.file";
    static final String OTHERS = "sqlite.others";

    /** The resource the write check writes back unchanged. */
    static final String PROBE = "fence:doctor";

    private final String url;
    private final StoreOptions options;
    /** For the identity candidate of the access checks; null without them. */
    private final Clock clock;

    private final UserPrincipal user;
    /** The user the hooks run as, when it is known and may not be {@link #user}; else null. */
    private final Account hook;

    private final boolean access;

    private StoreChecks(
            String url, StoreOptions options, Clock clock, UserPrincipal user, Account hook, boolean access) {
        this.url = url;
        this.options = options;
        this.clock = clock;
        this.user = user;
        this.hook = hook;
        this.access = access;
    }

    /**
     * Every store check, {@code fence doctor}'s.
     *
     * @param user the user fence runs as (for the SQLite file's owner), or null when it cannot be told
     */
    public static StoreChecks all(String url, StoreOptions options, Clock clock, UserPrincipal user) {
        return all(url, options, clock, user, null);
    }

    /**
     * Every store check, judging a SQLite store's files for {@code hook}, the user the hooks run as: a file
     * root may write but the hooks' user may not is the failure a push meets, not the check.
     *
     * @param hook the hooks' user, or null to judge for {@code user}
     */
    public static StoreChecks all(String url, StoreOptions options, Clock clock, UserPrincipal user, Account hook) {
        return new StoreChecks(url, options, clock, user, hook, true);
    }

    /** Only the set-up checks, which write nothing: {@code fence serve}'s at start. */
    public static StoreChecks setup(String url, StoreOptions options, UserPrincipal user) {
        return new StoreChecks(url, options, null, user, null, false);
    }

    /** The finding that makes {@code fence serve} refuse to start, if the report has it. */
    public static Optional<Finding> refusal(Report report) {
        return report.find(EVICTION, Status.FAIL);
    }

    @Override
    public String name() {
        return SETUP;
    }

    @Override
    public List<Finding> run() {
        List<Finding> out = new ArrayList<>();
        StoreSetup setup;
        try {
            setup = Stores.inspect(url, options);
        } catch (StoreUnavailableException e) {
            out.add(Finding.fail(
                    REACHABLE, e.getMessage(), "start the store, or fix the host and port in the store URL"));
            return out;
        } catch (ConfigException e) {
            out.add(Finding.fail(SETUP, e.getMessage(), "fix the store URL (see README, Store URLs)"));
            return out;
        }
        if (setup instanceof StoreSetup.Redis r) {
            out.addAll(RedisJudge.judge(r));
        } else if (setup instanceof StoreSetup.Sqlite s) {
            out.addAll(SqliteJudge.judge(s, user, hook));
            if (access && !Files.exists(s.file())) {
                out.add(Finding.ok(REACHABLE, "not opened: " + s.file() + " does not exist yet"));
                return out;
            }
        }
        if (setup instanceof StoreSetup.Postgres p) {
            for (StoreSetup.Setting setting : p.settings()) {
                String check = POSTGRES + setting.name();
                out.add(
                        setting.fix() == null
                                ? Finding.ok(check, setting.detail())
                                : Finding.warn(check, setting.detail(), setting.fix()));
            }
        }
        if (access) {
            access(out);
        }
        return out;
    }

    private static String reachFix(FenceException e) {
        String m = e.getMessage() == null ? "" : e.getMessage();
        if (m.contains("READONLY")) {
            // Reading the identity checks the server's epoch, which writes: a replica refuses it.
            return "point the store URL at the master, or use redis-sentinel://… to follow whichever is master";
        }
        return e instanceof ConfigException
                ? "fix the store's set-up or credentials as the message says"
                : "start the store, or fix the host, port and credentials in the store URL";
    }

    /** Whom the write was made as, when the hooks run as someone else. */
    private String as() {
        if (hook == null || user == null || hook.name().equals(user.getName())) {
            return "";
        }
        return " as " + user.getName() + " (the hooks run as " + hook.name() + ")";
    }

    private void access(List<Finding> out) {
        LeaseStore store;
        try {
            store = Stores.open(url, options);
        } catch (FenceException e) {
            out.add(Finding.fail(REACHABLE, e.getMessage(), "fix the store URL (see README, Store URLs)"));
            return;
        }
        try (store) {
            StoreIdentity id;
            try {
                id = store.identity(Identities.candidate(clock.instant()));
                out.add(Finding.ok(
                        REACHABLE,
                        store.describe() + " answered: generation " + id.generation() + ", created " + id.createdAt()));
            } catch (FenceException e) {
                out.add(Finding.fail(REACHABLE, e.getMessage(), reachFix(e)));
                return;
            }
            try {
                ResourceState s = store.snapshot(List.of(PROBE)).get(PROBE);
                CommitResult r = store.commit(List.of(ResourceWrite.keeping(s, s.tip(), id.generation())), List.of());
                out.add(
                        r instanceof CommitResult.Committed
                                ? Finding.ok(
                                        WRITABLE,
                                        "a write (resource " + PROBE + ", no ledger event) went through" + as())
                                : Finding.warn(
                                        WRITABLE,
                                        "the write raced another one to resource " + PROBE + "; writability not shown",
                                        "run fence doctor again"));
            } catch (FenceException e) {
                out.add(Finding.fail(
                        WRITABLE,
                        e.getMessage(),
                        "make the store writable for this user: a Redis master (not a replica) with memory to spare,"
                                + " or a SQLite file and directory this user may write"));
            }
        }
    }
}
