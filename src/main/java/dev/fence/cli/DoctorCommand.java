package dev.fence.cli;

import dev.fence.core.InvalidInputException;
import dev.fence.doctor.Check;
import dev.fence.doctor.Doctor;
import dev.fence.doctor.Finding;
import dev.fence.doctor.HookIdentityCheck;
import dev.fence.doctor.RepoChecks;
import dev.fence.doctor.Report;
import dev.fence.doctor.Status;
import dev.fence.doctor.StoreChecks;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence doctor}: checks the set-up fence's safety depends on. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "doctor",
        mixinStandardHelpOptions = true,
        description = {
            "Check that the store is set up safely, and say how to fix what is not. Each finding is ok, warn",
            "or fail, with a one-line fix.",
            "",
            "With --repo DIR (a bare repository on the git host), check it as its hooks see it, as the user they",
            "run as (hook.user: the repository's owner, or --hook-user): push options reach the hook",
            "(git.push-options: receive.advertisePushOptions in the repository's, global or system git config);",
            "the hook files fence wrote are byte for byte what fence install writes today (hook.pre-receive,",
            "hook.post-receive); the class-data archive the hook starts from is current for its JDK and jar",
            "(hook.archive); the hooks' user can read their fence.conf, or the curl shim's fence-shim.conf",
            "(hook.config); then the store that fence.conf names (or --store), with a SQLite store's files judged",
            "for the hooks' user, not for whoever runs fence doctor (root may write a file the hooks cannot);",
            "hook.store when the hook names none.",
            "",
            "Checks: the store answers (store.reachable) and takes a harmless, ledger-free write (store.writable);",
            "for Redis, that the server is a master (redis.role), that its maxmemory-policy cannot evict fence's",
            "keys (redis.eviction: allkeys-* fails), its persistence (redis.persistence: anything short of",
            "appendonly yes with appendfsync always warns) and its replicas (redis.replicas); for SQLite, that this",
            "user can write the file, its -wal and -shm files and its directory (sqlite.file), and that other users",
            "can neither read nor write them (sqlite.others: they hold the proof key; a warning, with the chmod);",
            "for PostgreSQL, synchronous_commit as the database or fence's role sets it (postgres.synchronous_commit:",
            "off or local warns, with the ALTER ROLE that fixes it; fence's own sessions commit with on) and",
            "synchronous_standby_names (postgres.synchronous_standby_names: empty warns). A SQLite file that does",
            "not exist yet is not created, nor is a PostgreSQL store's schema by these set-up checks.",
            "",
            "With --repo, also hook.identity: the pusher and repo id the installed hook would resolve from this",
            "environment and the hook's fence.conf; it warns when a plain-git pusher is the account that",
            "owns the repository (a host that runs every push as one shared account records every pusher as it).",
            "Set a host's variables to see what such a push resolves: GL_USER=alice fence doctor --repo DIR.",
            "",
            "Exit status: 0 when no check failed (warnings allowed), 6 (bad configuration) when one did.",
            "",
            "Examples:",
            "  fence doctor",
            "  fence doctor --store redis-sentinel://s1:26379,s2:26379/fence --json",
            "  sudo fence doctor --repo /srv/git/app.git --json",
            "  GL_USER=alice fence doctor --repo ~git/repositories/app.git"
        })
final class DoctorCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    StoreOption store;

    @Option(
            names = "--json",
            description = "Print one JSON object: {\"findings\":[{\"check\",\"status\",\"detail\",\"fix\"}],\"ok\"}.")
    boolean json;

    @Option(
            names = "--repo",
            paramLabel = "DIR",
            description = "A bare repository fence is installed in: check its hooks, git config and the hook's store.")
    Path repo;

    @Option(
            names = "--hook-user",
            paramLabel = "NAME",
            description = "With --repo: the user the git server runs hooks as (default: the repository's owner).")
    String hookUser;

    DoctorCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        if (hookUser != null && repo == null) {
            throw new InvalidInputException("--hook-user applies only with --repo");
        }
        Check check = repo != null
                ? new RepoChecks(
                        ctx.cwd().resolve(repo),
                        ctx.env(),
                        hookUser,
                        store.store,
                        StoreOptions.defaults(),
                        ctx.clock(),
                        user(ctx.env()))
                : StoreChecks.all(
                        Stores.resolveUrl(store.store, ctx.env()),
                        StoreOptions.defaults(),
                        ctx.clock(),
                        user(ctx.env()));
        List<Check> checks = new ArrayList<>(List.of(check));
        if (repo != null) {
            checks.add(new HookIdentityCheck(ctx.env(), ctx.cwd().resolve(repo), null));
        }
        Report report = Doctor.examine(checks);
        if (json) {
            List<Map<String, Object>> findings = new ArrayList<>();
            for (Finding f : report.findings()) {
                Map<String, Object> m = Json.object();
                m.put("check", f.check());
                m.put("status", f.status().label());
                m.put("detail", f.detail());
                m.put("fix", f.fix());
                findings.add(m);
            }
            Map<String, Object> m = Json.object();
            m.put("findings", findings);
            m.put("ok", report.ok());
            ctx.out().println(Json.write(m));
        } else {
            print(report);
        }
        return report.ok() ? ExitCode.OK.code() : ExitCode.CONFIG.code();
    }

    private void print(Report report) {
        int width = 0;
        for (Finding f : report.findings()) {
            width = Math.max(width, f.check().length());
        }
        for (Finding f : report.findings()) {
            ctx.out()
                    .println(String.format(
                            "%-4s  %-" + width + "s  %s", f.status().label(), f.check(), f.detail()));
            if (f.fix() != null) {
                ctx.out().println(" ".repeat(width + 8) + "fix: " + f.fix());
            }
        }
        long warnings = report.findings().stream()
                .filter(f -> f.status() == Status.WARN)
                .count();
        long failures = report.findings().stream()
                .filter(f -> f.status() == Status.FAIL)
                .count();
        ctx.out().println("fence doctor: " + count(failures, "failure") + ", " + count(warnings, "warning"));
    }

    private static String count(long n, String what) {
        return (n == 0 ? "no" : Long.toString(n)) + " " + what + (n == 1 ? "" : "s");
    }

    /** The user fence runs as, by the name the environment gives (Main supplies one), for file ownership. */
    static UserPrincipal user(Map<String, String> env) {
        String name = env.getOrDefault("USER", env.get("LOGNAME"));
        if (name == null || name.isBlank()) {
            return null;
        }
        try {
            return FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName(name);
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }
}
