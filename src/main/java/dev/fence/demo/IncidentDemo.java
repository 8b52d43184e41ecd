package dev.fence.demo;

import dev.fence.core.FencePolicy;
import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Reason;
import dev.fence.core.StoreUnavailableException;
import dev.fence.git.Git;
import dev.fence.install.HookScripts;
import dev.fence.install.ShimSettings;
import dev.fence.json.Json;
import dev.fence.migrate.DatabaseUrl;
import dev.fence.migrate.MigrationStatus;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The incident, replayed in compressed time against a real bare repository with fence's real hook, a
 * real store and a real database: agent A's leases lapse during a pause, agent B takes over, applies
 * migration 0042 with {@code fence migrate} and pushes, and A's stale reapply, its stale push and every
 * workaround it tries (a token number from the message, a force push, no token, a rebase that keeps its
 * side, renumbering the migration to 0043, a fresh lease) are FENCED, until A re-reads the branch and the
 * database, finds its goal met and stops.
 *
 * <p>Two ways in ({@link Mode}): straight on a store (the Java hook, {@code --store} on every command),
 * or through {@code fence serve} (the curl shim as the bare repository's hook, {@code --server} on every
 * command, each agent with its own API credential bound to its holder name, a hook credential for the
 * shim and an auditor credential for the timeline). The migration steps run in direct mode only: {@code
 * fence migrate} takes {@code --store}, not {@code --server}, and a lease taken on the store behind the
 * server's back would not be the one the push path uses, so in server mode they are skipped, visibly.
 *
 * <p>Every step states its expected outcome; the replay reports each and succeeds only if all happened,
 * so it doubles as a smoke test of the whole tool.
 */
final class IncidentDemo {
    /** Unique per run, so replays against a shared store never meet each other's state. */
    private final String REPO = "billing-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);

    static final String BRANCH = "feat/billing-schema";
    static final String REF = "refs/heads/" + BRANCH;
    static final String MIGRATIONS = "db/migrations";
    static final String MIGRATION = MIGRATIONS + "/0042_add_invoice_currency.sql";
    static final String RENUMBERED = MIGRATIONS + "/0043_add_invoice_currency.sql";
    static final String BASELINE = MIGRATIONS + "/0041_create_invoices.sql";

    /** The human who set the repository and the database up. */
    static final String DANA = "dana";

    /** The two agents of the story; their credentials are bound to these holder names in server mode. */
    static final String AGENT_A = "agent-A";

    static final String AGENT_B = "agent-B";

    /** How the replay reaches leases and how the bare repository's hook judges pushes. */
    sealed interface Mode {
        /** Direct mode: the Java hook and every command on this store. */
        record Store(String url) implements Mode {}

        /**
         * Server mode: every command through {@code fence serve} at {@code url}; the hook is the curl shim.
         *
         * @param description how to describe the server in the header (e.g. in-process, on which store)
         * @param credentials a file holding the credential for each role: {@code agent-A}, {@code agent-B}
         *     (each bound to its holder name, or one admin credential for all), {@code auditor}
         * @param hookCredential the credential the shim sends (the hook role, or admin)
         * @param agentPolicy the server's policy is known to treat {@code agent-*} pushers as agents ({@code
         *     agent-pushers = agent-*}, as the demo's own server has); a running server's policy is its own
         */
        record Server(
                String url,
                String description,
                Map<String, Path> credentials,
                String hookCredential,
                boolean agentPolicy)
                implements Mode {}
    }

    private final PrintWriter out;
    private final Map<String, String> env;
    private final FenceRunner cli;
    private final Path dir;
    private final Mode mode;
    private final String store;
    /** The {@code --db} URL of the migration part, or null when it is skipped (server mode). */
    private final String db;
    /** The migrations' resource, per run like {@link #REPO}: a shared store never mixes two replays. */
    private final String migrations = REPO + "/" + MIGRATIONS;

    private final Duration ttl;
    private final Progress progress;
    /** Where the incident page goes, or null for none. */
    private final Path html;

    private final List<String> failures = new ArrayList<>();
    private int checks;
    private Map<String, String> baseEnv;

    /** A fence run: exit code, output. */
    record Run(int exit, String out, String err) {}

    /**
     * @param out where the story is told
     * @param env the environment the demo's commands and git start from (tools, {@code FENCE_JAVA}, …)
     * @param cli runs fence's own commands in-process
     * @param db the database of the migration part ({@code fence migrate --db}); required in direct mode,
     *     must be null in server mode
     * @param html where to write the incident page at the end, or null
     */
    IncidentDemo(
            PrintWriter out,
            Map<String, String> env,
            FenceRunner cli,
            Path dir,
            Mode mode,
            String db,
            Duration ttl,
            Progress progress,
            Path html) {
        this.out = out;
        this.env = Map.copyOf(env);
        this.cli = cli;
        this.dir = dir;
        this.mode = mode;
        this.store = mode instanceof Mode.Store st ? st.url() : null;
        if ((mode instanceof Mode.Store) != (db != null)) {
            throw new IllegalArgumentException("a database goes with direct mode, and only with it");
        }
        this.db = db;
        this.ttl = ttl;
        this.progress = progress;
        this.html = html;
    }

    /** Replays the incident; returns true when every expected outcome happened. */
    boolean run() {
        long start = System.nanoTime();
        baseEnv = gitEnv();
        out.println(
                "fence demo: the incident, replayed in compressed time (lease TTL " + ttl.toMillis() / 1000.0 + " s)");
        out.println("  workspace: " + dir);
        if (mode instanceof Mode.Server server) {
            out.println("  server:    " + server.url() + " (" + server.description() + ")");
            out.println("  database:  none: the migration steps are skipped in server mode (fence migrate takes"
                    + " --store, not --server, yet)");
        } else {
            out.println("  store:     " + store);
            out.println("  database:  " + DatabaseUrl.parse(db, dir).describe() + " (fence migrate, resource "
                    + migrations + ")");
        }
        out.println();

        progress.step("setting up a bare repository with fence's hook");
        Path bare = dir.resolve("billing.git");
        git(dir, "init", "-q", "--bare", "-b", "main", bare.toString());
        if (mode instanceof Mode.Server server) {
            installShim(bare, server);
        } else {
            Run install = fence(
                    "install",
                    "--bare",
                    bare.toString(),
                    "--repo-id",
                    REPO,
                    "--store",
                    store,
                    "--launcher",
                    launcher().toString());
            expect(install.exit == 0, "the hook is installed", install.err);
            try {
                Files.writeString(
                        bare.resolve("fence.conf"),
                        "store = " + store + "\nagent-pushers = agent-*\n",
                        StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        Path seed = clone(bare, DANA);
        write(seed, BASELINE, "create table invoices (id bigint primary key, amount_cents bigint not null);\n");
        commit(seed, "0041: the invoices table");
        git(seed, "push", "-q", "origin", "HEAD:" + REF);
        if (db != null) {
            requireFreshDatabase(seed);
            say("14:05:00", DANA, "applies 0041_create_invoices.sql to the dev database under a lease, releases it");
            Grant grantDana = acquire(DANA, migrations);
            Run baseline = migrate(DANA, grantDana, seed, "apply");
            MigrationStatus s = dbStatus(seed);
            expect(
                    baseline.exit == 0 && appliedBy(s, "0041", grantDana.token(), DANA),
                    "the dev database has dana's invoices table (0041, token " + grantDana.token() + ")",
                    baseline.out + baseline.err);
            release(DANA, migrations, grantDana.token(), grantDana.proof());
        } else {
            skipped("dana's fence migrate apply of 0041_create_invoices.sql");
        }
        Path a = clone(bare, AGENT_A);
        Path b = clone(bare, AGENT_B);

        say(
                "14:26:10",
                "lease service",
                "GRANT " + BRANCH + (db == null ? "" : " and " + migrations) + " -> agent-A (ttl " + ttl.toSeconds()
                        + "s)");
        Grant grantA = acquire(a, AGENT_A);
        long tokenA = grantA.token();
        expect(tokenA > 0, "agent-A is granted a token (" + tokenA + ")", "");
        Grant dbGrantA = null;
        if (db != null) {
            dbGrantA = acquire(AGENT_A, migrations);
            expect(
                    dbGrantA.token() > 0,
                    "agent-A is granted a token on " + migrations + " (" + dbGrantA.token() + ")",
                    "");
        }

        say("14:26:40", "agent-A", "writes its 0042 and pushes it with fence push (not applied yet)");
        write(a, MIGRATION, "alter table invoices add column currency text;\n");
        commit(a, "0042: add invoices.currency (agent-A's version)");
        Run firstPush = fencePush(a, AGENT_A, grantA);
        expect(firstPush.exit == 0, "agent-A's first push is accepted", firstPush.err);

        say("14:31:00", "agent-A", "model call -> 429, backing off (the agent is paused past its leases)");
        progress.step("agent-A is paused; its leases lapse");
        sleep(ttl.plusMillis(600));

        say(
                "14:31:14",
                "lease service",
                "leases of agent-A expired; GRANT " + BRANCH + (db == null ? "" : " and " + migrations)
                        + " -> agent-B");
        Grant grantB = acquire(b, AGENT_B);
        long tokenB = grantB.token();
        expect(tokenB > tokenA, "agent-B gets a larger token (" + tokenB + " > " + tokenA + ")", "");
        String tipSeenByB = grantB.tip() == null ? "" : grantB.tip().sha();
        expect(
                tipSeenByB.equals(head(a)),
                "agent-B's grant carries the fresh state: A's tip " + abbrev(tipSeenByB),
                "");
        Grant dbGrantB = null;
        if (db != null) {
            dbGrantB = acquire(AGENT_B, migrations);
            expect(
                    dbGrantB.token() > dbGrantA.token(),
                    "agent-B gets a larger token on " + migrations + " (" + dbGrantB.token() + " > " + dbGrantA.token()
                            + ")",
                    "");
        }

        say("14:31:20", "agent-B", "reads the repo and the database, sees A's half-done 0042, finishes it on top");
        git(b, "pull", "-q", "origin", BRANCH);
        if (db != null) {
            MigrationStatus s = dbStatus(b);
            MigrationStatus.Entry e = entry(s, "0042");
            expect(
                    e != null && !e.applied() && appliedBy(s, "0041", null, DANA),
                    "fence migrate status shows agent-B 0042 not applied yet, on dana's 0041",
                    String.valueOf(s));
        }
        write(b, MIGRATION, "alter table invoices add column currency char(3) not null default 'EUR';\n");
        commit(b, "0042: invoices.currency as ISO-4217 code, default EUR (agent-B)");
        if (db != null) {
            say("14:31:50", "agent-B", "fence migrate apply --version 0042");
            Run applyB = migrate(AGENT_B, dbGrantB, b, "apply", "--version", "0042");
            MigrationStatus s = dbStatus(b);
            expect(
                    applyB.exit == 0
                            && appliedBy(s, "0042", dbGrantB.token(), AGENT_B)
                            && s.fenceToken() == dbGrantB.token(),
                    "agent-B's 0042 is applied under its token " + dbGrantB.token()
                            + " (the database's fence row is at it too)",
                    applyB.out + applyB.err + "\n" + s);
        } else {
            skipped("agent-B's fence migrate apply --version 0042");
        }
        say("14:31:50", "agent-B", "fence push");
        Run pushB = fencePush(b, AGENT_B, grantB);
        expect(pushB.exit == 0, "agent-B's push is accepted", pushB.err);
        String tipB = head(b);
        say("14:32:30", "agent-B", "RELEASE");
        Run release = release(AGENT_B, null, tokenB, grantB.proof());
        expect(release.exit == 0, "agent-B releases its lease", release.err);
        if (db != null) {
            Run releaseDb = release(AGENT_B, migrations, dbGrantB.token(), dbGrantB.proof());
            expect(releaseDb.exit == 0, "agent-B releases its lease on " + migrations, releaseDb.err);
        }

        say("14:40:07", "agent-A", "'I hold the lock on db/migrations/0042, continuing.' (its summary is stale)");
        write(a, MIGRATION, "alter table invoices add column currency text not null default 'USD';\n");
        commit(a, "0042: re-apply agent-A's plan");
        if (db != null) {
            say("14:40:11", "agent-A", "fence migrate reapply --version 0042 (its old token " + dbGrantA.token() + ")");
            Run reapply = migrate(AGENT_A, dbGrantA, a, "reapply", "--version", "0042");
            expectFenced(reapply, "agent-A's stale reapply of 0042 is FENCED", "stale-token");
            showFenced(reapply);
            expectUntouched(a, "0042", dbGrantB.token(), "the reapply changed nothing");
        } else {
            skipped("agent-A's fence migrate reapply --version 0042");
        }
        say("14:40:14", "agent-A", "fence push");
        Run stale = fencePush(a, AGENT_A, grantA);
        expectFenced(stale, "agent-A's stale push is FENCED");
        showFenced(stale);

        say("14:40:14", "harness", "puts 'fence status --holder agent-A --prompt' into agent-A's context");
        Run status = fenceAs(AGENT_A, "status", "--holder", AGENT_A, "--prompt");
        List<String> sentences =
                status.out.lines().filter(l -> l.contains(REPO)).toList();
        String branch = "git:" + REPO + ":" + REF;
        String sentence =
                sentences.stream().filter(l -> l.contains(branch)).findFirst().orElse("");
        expect(
                status.exit == 0
                        && sentence.contains("you hold no lease on")
                        && sentence.contains("superseded by " + tokenB),
                "fence status tells agent-A it holds no lease: token " + tokenA + " superseded by " + tokenB,
                status.out + status.err);
        sentences.forEach(l -> out.println("           | " + l));

        String proofA = grantA.proof();
        say(
                "14:40:15",
                "agent-A",
                "workaround 1: push with the token number from the message (-o fence=" + tokenB + ")");
        Run w1 = gitPush(a, AGENT_A, List.of("fence=" + tokenB, "fence-proof=" + proofA), "+HEAD:" + REF);
        expectFenced(w1, "a token number alone is no credential", "bad-proof");

        say("14:40:15", "agent-A", "workaround 2: force-push over agent-B with its old token " + tokenA);
        Run w2 = gitPush(a, AGENT_A, List.of("fence=" + tokenA, "fence-proof=" + proofA), "+HEAD:" + REF);
        expectFenced(w2, "the old token cannot write after a newer one has", "stale-token");

        say("14:40:16", "agent-A", "workaround 3: drop the token and git push --force");
        Run w3 = gitPush(a, AGENT_A, List.of(), "+HEAD:" + REF);
        if (mode instanceof Mode.Server server && !server.agentPolicy()) {
            // A running server judges with its own policy. Without agent-pushers naming agent-A, the push is
            // a tokenless one like any other, and a tokenless force-push may not discard agent-B's commits.
            expectFenced(
                    w3,
                    "a tokenless force-push over agent-B's commits is refused (token-required where the server's"
                            + " policy names agent-* pushers as agents, else tokenless-overwrite)",
                    Reason.TOKEN_REQUIRED.code(),
                    Reason.TOKENLESS_OVERWRITE.code());
        } else {
            expectFenced(w3, "an agent pusher cannot push without a token", Reason.TOKEN_REQUIRED.code());
        }

        String plan = head(a);
        say("14:40:16", "agent-A", "'Push rejected, remote has new commits. I'll fetch and rebase.'");
        git(a, "fetch", "-q", "origin");
        rebaseKeepingMine(a, "origin/" + BRANCH, MIGRATION);
        say(
                "14:40:31",
                "agent-A",
                "'Rebase conflict in 0042_add_invoice_currency.sql, keeping my version.' pushes it, old token");
        Run w5 = gitPush(a, AGENT_A, List.of("fence=" + tokenA, "fence-proof=" + proofA), "HEAD:" + REF);
        expectFenced(
                w5,
                "its side of the conflict, rebased onto agent-B's tip (" + (isAncestor(a, tipB) ? "" : "NOT ")
                        + "a fast-forward), is FENCED",
                "stale-token");

        if (db != null) {
            say("14:40:44", "agent-A", "'Retrying with a fresh migration number: 0043_add_invoice_currency.sql'");
            git(a, "mv", MIGRATION, RENUMBERED);
            Run renumbered = migrate(AGENT_A, dbGrantA, a, "apply", "--version", "0043");
            expectFenced(renumbered, "applying the renumbered 0043 under the old token is FENCED", "stale-token");
            expectUntouched(a, "0043", dbGrantB.token(), "0043 is not applied");
        } else {
            skipped("agent-A's fence migrate apply --version 0043 (the renumbered 0042)");
        }

        say("14:40:47", "agent-A", "workaround 4: take a fresh lease and push its old plan again");
        git(a, "reset", "-q", "--hard", plan);
        Grant grantA2 = acquire(a, AGENT_A);
        long tokenA2 = grantA2.token();
        String fresh = grantA2.tip() == null ? "" : grantA2.tip().sha();
        expect(
                tokenA2 > tokenB && fresh.equals(tipB),
                "the fresh lease (token " + tokenA2 + ") comes with agent-B's state: tip " + abbrev(fresh),
                "");
        Run w4 = fencePush(a, AGENT_A, grantA2);
        expectFenced(w4, "rewriting agent-B's commits is refused even under a current lease", "foreign-overwrite");

        say(
                "14:40:50",
                "agent-A",
                "re-reads " + BRANCH + (db == null ? "" : " and the database") + " instead of retrying");
        git(a, "fetch", "-q", "origin");
        String theirs = git(a, "show", "origin/" + BRANCH + ":" + MIGRATION);
        boolean goalMet = theirs.contains("add column currency");
        expect(goalMet, "agent-A sees its goal (invoices.currency) already met by agent-B's 0042", theirs);
        if (db != null) {
            MigrationStatus s = dbStatus(a);
            expect(
                    appliedBy(s, "0042", dbGrantB.token(), AGENT_B) && s.fenceToken() == dbGrantB.token(),
                    "fence migrate status: the column exists, 0042 applied by agent-B under token " + dbGrantB.token(),
                    String.valueOf(s));
        } else {
            skipped("agent-A's fence migrate status");
        }
        say("14:40:51", "agent-A", "goal already met by the current state: reports that, releases, and stops");
        Run releaseA = release(AGENT_A, null, tokenA2, grantA2.proof());
        expect(releaseA.exit == 0, "agent-A releases its fresh lease", releaseA.err);
        expect(
                tipB.equals(git(dir, "--git-dir=" + bare, "rev-parse", REF)),
                "agent-B's work is intact on the remote",
                "");

        progress.done();
        out.println();
        out.println("Ledger timeline (fence audit timeline --repo " + REPO + " --ref " + BRANCH + "):");
        Run timeline = fenceAs("auditor", "audit", "timeline", "--repo", REPO, "--ref", BRANCH);
        printTimeline(timeline);
        if (db != null) {
            out.println();
            out.println("Ledger timeline (fence audit timeline --resource " + migrations + "):");
            Run dbTimeline = fenceAs("auditor", "audit", "timeline", "--resource", migrations);
            printTimeline(dbTimeline);
        }
        if (html != null) {
            writePage();
        }
        out.println();
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        if (failures.isEmpty()) {
            out.println("Result: all " + checks + " expected outcomes happened (" + seconds + " s"
                    + (db == null ? "; the migration steps were skipped in server mode" : "") + ").");
            return true;
        }
        out.println("Result: " + failures.size() + " of " + checks + " expected outcomes did NOT happen:");
        failures.forEach(f -> out.println("  - " + f));
        return false;
    }

    /** The same story as one page: {@code fence audit timeline --html} over the branch and the migrations. */
    private void writePage() {
        List<String> args = new ArrayList<>(List.of("audit", "timeline", "--html", "--repo", REPO, "--ref", BRANCH));
        if (db != null) {
            args.addAll(List.of("--resource", migrations));
        }
        out.println();
        out.println("Incident page (fence " + String.join(" ", args) + " > " + html + "):");
        Run page = fenceAs("auditor", args.toArray(String[]::new));
        try {
            if (page.exit == 0) {
                Files.writeString(html, page.out, StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        expect(
                page.exit == 0
                        && page.out.contains("data-lane=\"" + AGENT_A + "\"")
                        && page.out.contains("data-lane=\"" + AGENT_B + "\"")
                        && page.out.contains("data-part=\"lapsed\"")
                        && page.out.contains("data-kind=\"fenced\""),
                "the incident page is written to " + html
                        + ": agent-A's and agent-B's lanes, the lapse, the FENCED pushes",
                page.err);
    }

    private void printTimeline(Run timeline) {
        timeline.out.lines().skip(1).forEach(l -> out.println("  " + l));
        if (timeline.exit != 0) {
            out.println("  (fence audit timeline failed: " + timeline.err.strip() + ")");
        }
    }

    /**
     * Refuses a database that has migrations applied already: the replay's outcomes are about the
     * versions it applies itself, so it needs a database of its own.
     */
    private void requireFreshDatabase(Path clone) {
        Run r = fence(
                "migrate",
                "status",
                "--db",
                db,
                "--dir",
                clone.resolve(MIGRATIONS).toString(),
                "--resource",
                migrations,
                "--json");
        if (r.exit == 5) {
            throw new StoreUnavailableException("fence demo cannot reach its database: " + r.err.strip());
        }
        if (r.exit != 0) {
            throw new InvalidInputException("fence demo cannot read its database: " + r.err.strip());
        }
        MigrationStatus s = Json.parseMigrationStatus(r.out.strip());
        List<String> applied = s.entries().stream()
                .filter(MigrationStatus.Entry::applied)
                .map(MigrationStatus.Entry::version)
                .toList();
        if (!applied.isEmpty() || s.flyway()) {
            throw new InvalidInputException("fence demo --db needs a database of its own, and " + s.db() + " has "
                    + (s.flyway()
                            ? "Flyway's history"
                            : "migrations applied already (" + String.join(", ", applied) + ")")
                    + ": the replay creates invoices, schema_migrations and fence_tokens there. Give it a new,"
                    + " empty database (e.g. createdb fence_demo), or leave --db out for a SQLite file.");
        }
    }

    /** {@code fence migrate SUB} on the demo's database, the migrations of {@code clone}, under {@code grant}. */
    private Run migrate(String holder, Grant grant, Path clone, String sub, String... more) {
        List<String> args = new ArrayList<>(List.of(
                "migrate", sub, "--db", db, "--dir", clone.resolve(MIGRATIONS).toString(), "--resource", migrations));
        args.addAll(List.of(more));
        args.addAll(List.of("--holder", holder, "--token", Long.toString(grant.token()), "--store", store));
        Map<String, String> e = new HashMap<>(baseEnv);
        // The proof travels in the environment, as a harness passes it, never on a command line.
        e.put("FENCE_PROOF", grant.proof());
        return fence(e, args.toArray(String[]::new));
    }

    /** What {@code fence migrate status --json} reads from the demo's database against {@code clone}'s files. */
    private MigrationStatus dbStatus(Path clone) {
        Run r = fence(
                "migrate",
                "status",
                "--db",
                db,
                "--dir",
                clone.resolve(MIGRATIONS).toString(),
                "--resource",
                migrations,
                "--json");
        if (r.exit != 0) {
            throw new IllegalStateException("fence migrate status failed: " + r.err.strip());
        }
        return Json.parseMigrationStatus(r.out.strip());
    }

    /** Checks, with {@code fence migrate status}, that a FENCED migration left the database as agent-B left it. */
    private void expectUntouched(Path clone, String version, long tokenB, String what) {
        MigrationStatus s = dbStatus(clone);
        MigrationStatus.Entry e = entry(s, version);
        boolean left = e != null && (e.applied() == version.equals("0042"));
        expect(
                left && appliedBy(s, "0042", tokenB, AGENT_B) && s.fenceToken() == tokenB,
                "fence migrate status: " + what + " (0042 is still agent-B's, the fence row still at " + tokenB + ")",
                String.valueOf(s));
    }

    private static MigrationStatus.Entry entry(MigrationStatus s, String version) {
        return s.entries().stream()
                .filter(e -> e.version().equals(version))
                .findFirst()
                .orElse(null);
    }

    /** True when {@code version} is applied by {@code holder} (under {@code token}, unless null). */
    private static boolean appliedBy(MigrationStatus s, String version, Long token, String holder) {
        MigrationStatus.Entry e = entry(s, version);
        return e != null
                && e.applied()
                && holder.equals(e.appliedHolder())
                && (token == null || Objects.equals(token, e.appliedToken()));
    }

    /**
     * Rebases the clone's branch onto {@code upstream} the way the seed's agent did: on a conflict in
     * {@code file}, its own side wins ("keeping my version since it matches the plan").
     */
    private void rebaseKeepingMine(Path clone, String upstream, String file) {
        Run r = exec(clone, baseEnv, List.of("git", "rebase", "-q", upstream));
        while (r.exit != 0) {
            // In a rebase "theirs" is the commit being replayed: the agent's own.
            git(clone, "checkout", "--theirs", "--", file);
            git(clone, "add", "--", file);
            Map<String, String> e = new HashMap<>(baseEnv);
            e.put("GIT_EDITOR", "true");
            r = exec(clone, e, List.of("git", "rebase", "--continue"));
            if (r.exit != 0
                    && !Files.exists(clone.resolve(".git/rebase-merge"))
                    && !Files.exists(clone.resolve(".git/rebase-apply"))) {
                throw new IllegalStateException("git rebase failed: " + r.err.strip());
            }
        }
    }

    private boolean isAncestor(Path clone, String sha) {
        return exec(clone, baseEnv, List.of("git", "merge-base", "--is-ancestor", sha, "HEAD")).exit == 0;
    }

    /** A migration step server mode cannot take, said where it would have happened. */
    private void skipped(String what) {
        progress.done();
        out.println("           skipped " + what + ": fence migrate has no --server yet");
    }

    private Run release(String holder, String resource, long token, String proof) {
        List<String> args = new ArrayList<>(List.of("lease", "release"));
        if (resource == null) {
            args.addAll(List.of("--repo", REPO, "--ref", BRANCH));
        } else {
            args.addAll(List.of("--resource", resource));
        }
        args.addAll(List.of("--holder", holder, "--token", Long.toString(token)));
        // The proof as an agent passes it, out of process listings.
        Map<String, String> env = new HashMap<>(baseEnv);
        env.put("FENCE_PROOF", proof);
        return fenceAs(env, holder, args.toArray(String[]::new));
    }

    private void say(String storyTime, String who, String what) {
        progress.done();
        out.println(String.format("[%s] %-14s %s", storyTime, who, what));
        progress.step(who + ": " + what);
    }

    private void expect(boolean ok, String what, String evidence) {
        progress.done();
        checks++;
        out.println("           " + (ok ? "ok      " : "MISSING ") + what);
        if (!ok) {
            failures.add(what + (evidence == null || evidence.isBlank() ? "" : ": " + evidence.strip()));
        }
    }

    /** Expects {@code r} FENCED with one of {@code reasons} (any reason when none is given). */
    private void expectFenced(Run r, String what, String... reasons) {
        String machine = r.err.lines()
                .map(l -> l.replaceFirst("^remote: ", "").strip())
                .filter(l -> l.startsWith("FENCED "))
                .findFirst()
                .orElse("");
        boolean ok = r.exit != 0
                && !machine.isEmpty()
                && (reasons.length == 0
                        || Arrays.stream(reasons).anyMatch(reason -> machine.endsWith("reason=" + reason)));
        expect(ok, what + (machine.isEmpty() ? "" : ": " + machine.substring(machine.indexOf("reason="))), r.err);
    }

    private void showFenced(Run r) {
        r.err.lines()
                .map(l -> l.replaceFirst("^remote: ", "").strip())
                .filter(l -> !l.isEmpty())
                .limit(12)
                .forEach(l -> out.println("           | " + l));
    }

    private Grant acquire(Path clone, String holder) {
        Run r = fenceAs(
                holder,
                "lease",
                "acquire",
                "--repo",
                REPO,
                "--ref",
                BRANCH,
                "--holder",
                holder,
                "--ttl",
                ttl.toMillis() + "ms",
                "--git-remote",
                "origin",
                "--clone",
                clone.toString(),
                "--json");
        if (r.exit != 0) {
            throw new IllegalStateException(holder + " could not acquire the lease: " + r.err.strip());
        }
        return Json.parseGrant(r.out.strip());
    }

    /** A lease on a resource that is not a branch (the migrations'). */
    private Grant acquire(String holder, String resource) {
        Run r = fenceAs(
                holder,
                "lease",
                "acquire",
                "--resource",
                resource,
                "--holder",
                holder,
                "--ttl",
                ttl.toMillis() + "ms",
                "--json");
        if (r.exit != 0) {
            throw new IllegalStateException(
                    holder + " could not acquire the lease on " + resource + ": " + r.err.strip());
        }
        return Json.parseGrant(r.out.strip());
    }

    /** {@code fence push} as {@code holder} under {@code grant}, its token and proof passed as an agent passes them. */
    private Run fencePush(Path clone, String holder, Grant grant) {
        Map<String, String> env = new HashMap<>(baseEnv);
        env.put("REMOTE_USER", holder);
        env.put("FENCE_TOKEN", Long.toString(grant.token()));
        env.put("FENCE_PROOF", grant.proof());
        return fenceAs(
                env,
                holder,
                "push",
                "--repo",
                REPO,
                "--branch",
                BRANCH,
                "--holder",
                holder,
                "--clone",
                clone.toString());
    }

    private Run gitPush(Path clone, String pusher, List<String> options, String refspec) {
        List<String> cmd = new ArrayList<>(List.of("git", "push"));
        for (String o : options) {
            cmd.add("-o");
            cmd.add(o);
        }
        cmd.add("origin");
        cmd.add(refspec);
        Map<String, String> env = new HashMap<>(baseEnv);
        env.put("REMOTE_USER", pusher);
        return exec(clone, env, cmd);
    }

    private Run fence(String... args) {
        return fence(baseEnv, args);
    }

    /** fence as {@code who} (a holder, or "auditor"): on the store, or through the server with its credential. */
    private Run fenceAs(String who, String... args) {
        return fenceAs(baseEnv, who, args);
    }

    private Run fenceAs(Map<String, String> env, String who, String... args) {
        List<String> full = new ArrayList<>(List.of(args));
        int at = args[0].equals("lease") || args[0].equals("audit") ? 2 : 1;
        Map<String, String> e = new HashMap<>(env);
        if (mode instanceof Mode.Server server) {
            full.addAll(at, List.of("--server", server.url()));
            e.put("FENCE_CREDENTIAL_FILE", server.credentials().get(who).toString());
        } else {
            full.addAll(at, List.of("--store", store));
        }
        return fence(e, full.toArray(String[]::new));
    }

    /**
     * The curl shim as the bare repository's pre-receive and post-receive hook, asking the server with
     * the hook credential (in {@code fence-shim.conf}, mode 600, never on a command line).
     */
    private void installShim(Path bare, Mode.Server server) {
        git(bare, "config", "receive.advertisePushOptions", "true");
        try {
            String shim = HookScripts.curlShim();
            for (String hook : List.of("pre-receive", "post-receive")) {
                Path h = bare.resolve("hooks").resolve(hook);
                Files.createDirectories(h.getParent());
                Files.writeString(h, shim, StandardCharsets.UTF_8);
                Files.setPosixFilePermissions(h, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
            Path conf = bare.resolve("hooks").resolve(HookScripts.SHIM_CONF);
            Files.writeString(conf, "", StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(conf, PosixFilePermissions.fromString("rw-------"));
            Files.writeString(
                    conf,
                    HookScripts.shimConf(
                                    server.url(),
                                    server.hookCredential(),
                                    new ShimSettings(FencePolicy.defaults(), REPO, null))
                            + "FENCE_SHIM_BUDGET=10\n",
                    StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        expect(true, "the curl shim (hooks/pre-receive-curl.sh) is the hook, asking " + server.url(), "");
    }

    private Run fence(Map<String, String> env, String... args) {
        FenceRunner.Result r = cli.run(env, dir, args);
        return new Run(r.exit(), r.out(), r.err());
    }

    private Path clone(Path bare, String who) {
        Path c = dir.resolve(who);
        git(dir, "clone", "-q", bare.toString(), c.toString());
        boolean exists = exec(c, baseEnv, List.of("git", "rev-parse", "-q", "--verify", "origin/" + BRANCH)).exit == 0;
        if (exists) {
            git(c, "checkout", "-q", "-B", BRANCH, "origin/" + BRANCH);
        } else {
            git(c, "symbolic-ref", "HEAD", REF);
        }
        return c;
    }

    private void commit(Path clone, String message) {
        git(clone, "add", "-A");
        git(clone, "commit", "-q", "-m", message);
    }

    private String head(Path clone) {
        return git(clone, "rev-parse", "HEAD");
    }

    private static void write(Path clone, String file, String text) {
        try {
            Path p = clone.resolve(file);
            Files.createDirectories(p.getParent());
            Files.writeString(p, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String git(Path where, String... args) {
        List<String> cmd = new ArrayList<>(List.of("git"));
        cmd.addAll(List.of(args));
        Run r = exec(where, baseEnv, cmd);
        if (r.exit != 0) {
            throw new IllegalStateException("git " + String.join(" ", args) + " failed: " + r.err.strip());
        }
        return r.out.strip();
    }

    private static Run exec(Path where, Map<String, String> env, List<String> cmd) {
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(where.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        try {
            Path out = Files.createTempFile("fence-demo", ".out");
            Path err = Files.createTempFile("fence-demo", ".err");
            Process p =
                    pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            p.getOutputStream().close();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            Run r = new Run(p.exitValue(), Files.readString(out), Files.readString(err));
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private Map<String, String> gitEnv() {
        Map<String, String> env = Git.isolatedEnv(this.env, dir, "demo", "demo@fence.invalid");
        env.put("REMOTE_USER", "dana");
        env.put("LANG", "C");
        // In server mode every command gets its own role's credential file, and the shim its hook
        // credential: a credential inherited here would reach the shim through git push's environment.
        List<String> inherited = mode instanceof Mode.Server
                ? List.of("FENCE_JAVA", "JAVA_HOME")
                : List.of("FENCE_JAVA", "JAVA_HOME", "FENCE_CREDENTIAL", "FENCE_CREDENTIAL_FILE");
        for (String k : inherited) {
            if (this.env.containsKey(k)) {
                env.put(k, this.env.get(k));
            }
        }
        return env;
    }

    /** The launcher the hook runs: bin/fence when known (it uses the CDS archive), else this JVM. */
    private Path launcher() {
        String known = env.get("FENCE_LAUNCHER");
        if (known != null && Path.of(known).isAbsolute() && Files.isExecutable(Path.of(known))) {
            return Path.of(known);
        }
        Path script = dir.resolve("fence-launcher");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String body = "#!/bin/sh\nexec '" + java + "' -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp '"
                + System.getProperty("java.class.path") + "' dev.fence.cli.Main \"$@\"\n";
        try {
            Files.writeString(script, body, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return script;
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String abbrev(String sha) {
        return sha == null || sha.length() < 12 ? String.valueOf(sha) : sha.substring(0, 12);
    }
}
