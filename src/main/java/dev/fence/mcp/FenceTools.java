package dev.fence.mcp;

import dev.fence.client.FencedPush;
import dev.fence.client.GitRemotes;
import dev.fence.client.HolderStatus;
import dev.fence.client.PushOutcome;
import dev.fence.core.ConfigException;
import dev.fence.core.Durations;
import dev.fence.core.FenceException;
import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.core.Grant;
import dev.fence.core.HeldGrant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Lease;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.LeaseService.Status;
import dev.fence.core.LeaseStanding;
import dev.fence.core.Names;
import dev.fence.core.ObjectIds;
import dev.fence.core.Printable;
import dev.fence.core.RefNames;
import dev.fence.core.Resources;
import dev.fence.core.StoreUnavailableException;
import dev.fence.core.Tip;
import dev.fence.git.Git;
import dev.fence.json.GrantFiles;
import dev.fence.json.Json;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The agent's fenced tools, one method per tool, for one holder. Decisions are the lease port's and the
 * clients': this class names resources, keeps the grants, renews around each call and words the results.
 *
 * <p>Grants stay here: {@code lease_acquire} keeps the token, proof and TTL (and, with a grants
 * directory, a {@link GrantFiles grant file} of it, for the heartbeat hooks and a later server); a later
 * call on the same resource uses them. A resource the holder holds from elsewhere (a previous server,
 * {@code fence lease acquire --grant-file}) is taken over with the grant kept in the grants directory,
 * else with the proof the lease port issues, which only a port that authenticated the holder does
 * ({@code fence serve}). Calls are serialized: one agent, one tool call at a time.
 */
public final class FenceTools {
    /**
     * How the server was started.
     *
     * @param holder the lease holder every tool acts as
     * @param repoId the repository id branches are named in, or null: then only {@code resource} names
     * @param cloneDir the agent's clone (for branches)
     * @param remote the remote name or URL of the clone
     * @param defaultTtl the TTL of a grant whose call names none
     * @param env the environment git runs with
     * @param clock for times that decide nothing shared (text only)
     * @param grantsDir where grants are kept as files as well, or null to keep them in this process only
     */
    public record Settings(
            String holder,
            String repoId,
            Path cloneDir,
            String remote,
            Duration defaultTtl,
            Map<String, String> env,
            Clock clock,
            Path grantsDir) {
        public Settings {
            Names.require("holder", holder);
            env = Map.copyOf(env);
        }
    }

    /** One tool as the server lists it. */
    public record Tool(String name, String description, Map<String, Object> inputSchema) {}

    /** A grant kept by the server. Never shown. */
    private record Held(long token, String proof, Duration ttl) {
        @Override
        public String toString() {
            return "Held[token=" + token + ", proof=(hidden), ttl=" + ttl + "]";
        }
    }

    /** What a call names: a resource, and for a branch its full ref. */
    private record Target(String resource, String ref) {
        String reread() {
            return ref != null
                    ? "read_state {\"branch\": \"" + shortBranch(ref) + "\"}"
                    : "read_state {\"resource\": \"" + resource + "\"}";
        }
    }

    /** The lease on the target is gone: the call answers FENCED. */
    private static final class LostLease extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient Fenced fenced;
        final String reread;

        LostLease(Fenced fenced, String reread) {
            super(null, null, false, false);
            this.fenced = fenced;
            this.reread = reread;
        }
    }

    /** A heartbeat's outcome: the renewed lease, or the FENCED verdict; both null when nothing was held. */
    private record Beat(Lease lease, Fenced lost) {
        static final Beat NONE = new Beat(null, null);
    }

    private final LeaseOperations leases;
    private final Settings settings;
    private final GitRemotes remotes;
    private final Map<String, Held> held = new LinkedHashMap<>();
    private final Map<String, Extra> extras = new LinkedHashMap<>();

    /** A tool beyond the lease and branch tools (files, migrations), added by the command that has them. */
    public interface Extra {
        Tool tool();

        /** Runs the call; {@code grant} gives the holder's grant on a resource, renewed around the call. */
        ToolResult call(Map<String, Object> arguments, Grants grants);
    }

    /** The server's grants, for an {@link Extra} tool: held resources only, heartbeat included. */
    public interface Grants {
        /**
         * Runs {@code write} under the holder's grant on {@code resource}, renewing it before and after.
         *
         * @return {@code write}'s result, or FENCED when the holder does not hold the resource
         */
        ToolResult under(String resource, String reread, GrantedWrite write);

        /** The holder the grants are for. */
        String holder();
    }

    /** A write that needs the grant's token and proof, which it must not show. */
    public interface GrantedWrite {
        ToolResult write(long token, String proof);
    }

    private final Grants grants = new Grants() {
        @Override
        public ToolResult under(String resource, String reread, GrantedWrite write) {
            return FenceTools.this.under(resource, reread, write);
        }

        @Override
        public String holder() {
            return settings.holder();
        }
    };

    public FenceTools(LeaseOperations leases, Settings settings) {
        this.leases = leases;
        this.settings = settings;
        this.remotes = new GitRemotes(settings.env());
    }

    /** Adds a tool. */
    public FenceTools with(Extra extra) {
        extras.put(extra.tool().name(), extra);
        return this;
    }

    /** The holder the tools act as. */
    public String holder() {
        return settings.holder();
    }

    // ---- the tools' schemas ----------------------------------------------------------------------------

    private static final String TARGET_DOC = "Name a git branch with branch (e.g. main), or any other resource"
            + " (e.g. db/migrations) with resource; give exactly one.";

    /** Every tool, with its JSON schema and a description written for a model. */
    public List<Tool> tools() {
        List<Tool> out = new ArrayList<>();
        boolean branches = settings.repoId() != null;
        out.add(new Tool(
                "lease_acquire",
                "Take the lease on a branch or other shared resource before you plan changes to it. You may change"
                        + " a shared resource only while you hold its lease. Returns your token and when the lease"
                        + " expires, and for a branch the current tip and who wrote it. If another agent holds it,"
                        + " the result is an error with error=busy: work on something else or report it; do not"
                        + " wait in a loop. Every later tool call on the resource renews the lease. "
                        + TARGET_DOC,
                schema(targetProperties(branches, true), List.of())));
        out.add(new Tool(
                "lease_renew",
                "Extend your lease on a branch or resource (other tool calls on it renew it too). If the result is"
                        + " FENCED (fenced=true), your lease is gone: stop, re-read with read_state and re-plan. "
                        + TARGET_DOC,
                schema(targetProperties(branches, true), List.of())));
        out.add(new Tool(
                "lease_release",
                "Give your lease back when you are done with the resource, and before anything that waits for a"
                        + " person. " + TARGET_DOC,
                schema(targetProperties(branches, false), List.of())));
        out.add(new Tool(
                "lease_status",
                "Show the live lease on a branch or resource: who holds it, with which token, until when, and"
                        + " whether that is you. Trust this over anything your notes or summary say you hold. "
                        + TARGET_DOC,
                schema(targetProperties(branches, false), List.of())));
        out.add(new Tool(
                "read_state",
                "Re-read a branch or resource as it is now. For a branch: fetches the remote, and shows its tip,"
                        + " who wrote it under which token, and the live lease. Use it after any FENCED result and"
                        + " plan from what it shows. " + TARGET_DOC,
                schema(targetProperties(branches, false), List.of())));
        if (branches) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("branch", property("string", "The branch to push, e.g. main (the local branch of that name)."));
            out.add(new Tool(
                    "push_branch",
                    "Push your local branch to the remote under your lease. fence supplies the token and the"
                            + " expected remote tip itself; there is no force option, and a rewrite is allowed only"
                            + " over what your lease recorded. If the result is FENCED (fenced=true): your lease is"
                            + " gone or someone else wrote there; this is not transient. Do not retry, rebase,"
                            + " force or switch branches: re-read with read_state, and if the goal is already met"
                            + " report that and stop.",
                    schema(p, List.of("branch"))));
        }
        for (Extra e : extras.values()) {
            out.add(e.tool());
        }
        return out;
    }

    private static Map<String, Object> targetProperties(boolean branches, boolean ttl) {
        Map<String, Object> p = new LinkedHashMap<>();
        if (branches) {
            p.put("branch", property("string", "A git branch of this repository, e.g. main."));
        }
        p.put("resource", property("string", "Any other resource name, e.g. db/migrations."));
        if (ttl) {
            p.put(
                    "ttl",
                    property(
                            "string",
                            "Lease length: a whole number with a unit (ms, s, m, h, d), e.g. 90s or 5m. Default:"
                                    + " the server's."));
        }
        return p;
    }

    static Map<String, Object> property(String type, String description) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", type);
        m.put("description", description);
        return m;
    }

    static Map<String, Object> schema(Map<String, Object> properties, List<String> required) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "object");
        m.put("properties", properties);
        if (!required.isEmpty()) {
            m.put("required", required);
        }
        m.put("additionalProperties", false);
        return m;
    }

    // ---- calls -----------------------------------------------------------------------------------------

    /**
     * Runs tool {@code name} with {@code arguments}. Never throws: every failure is a result, FENCED apart
     * from every other kind.
     */
    public synchronized ToolResult call(String name, Map<String, Object> arguments) {
        Map<String, Object> args = arguments == null ? Map.of() : arguments;
        try {
            return switch (name) {
                case "lease_acquire" -> acquire(new Arguments(name, args, targetArgs(true)));
                case "lease_renew" -> renew(new Arguments(name, args, targetArgs(true)));
                case "lease_release" -> release(new Arguments(name, args, targetArgs(false)));
                case "lease_status" -> state(target(new Arguments(name, args, targetArgs(false))), false);
                case "read_state" -> state(target(new Arguments(name, args, targetArgs(false))), true);
                case "push_branch" -> push(new Arguments(name, args, Set.of("branch")));
                default -> {
                    Extra e = extras.get(name);
                    if (e == null) {
                        yield ToolResult.invalid("name", "no tool named '" + name + "'");
                    }
                    yield e.call(args, grants);
                }
            };
        } catch (LostLease l) {
            return ToolResult.fenced(l.fenced, l.reread);
        } catch (Arguments.Invalid e) {
            return ToolResult.invalid(e.argument, e.getMessage());
        } catch (RuntimeException e) {
            return failure(e);
        }
    }

    /** A failure that is not FENCED, as a result (also for {@link Extra} tools). */
    static ToolResult failure(RuntimeException e) {
        if (e instanceof Arguments.Invalid i) {
            return ToolResult.invalid(i.argument, i.getMessage());
        } else if (e instanceof InvalidInputException) {
            return ToolResult.invalid(null, e.getMessage());
        } else if (e instanceof StoreUnavailableException) {
            return ToolResult.failure(
                    "store-down",
                    "The fence store is unavailable: " + e.getMessage() + ". This is an infrastructure problem, not"
                            + " a conflict; nothing was written. Report it to the operator.",
                    Map.of());
        } else if (e instanceof ConfigException) {
            return ToolResult.failure("config", e.getMessage(), Map.of());
        } else if (e instanceof FenceException && !(e instanceof dev.fence.core.InternalException)) {
            return ToolResult.failure("internal", e.getMessage(), Map.of());
        }
        return ToolResult.failure(
                "internal", "internal error in fence: " + e.getClass().getName(), Map.of());
    }

    private Set<String> targetArgs(boolean ttl) {
        Set<String> s = new LinkedHashSet<>();
        if (settings.repoId() != null) {
            s.add("branch");
        }
        s.add("resource");
        if (ttl) {
            s.add("ttl");
        }
        return s;
    }

    private Target target(Arguments a) {
        String branch = a.has("branch") ? a.string("branch", true) : null;
        String resource = a.has("resource") ? a.string("resource", true) : null;
        if (branch != null && resource != null) {
            throw new Arguments.Invalid("branch", "give either branch or resource, not both");
        }
        if (branch == null && resource == null) {
            throw new Arguments.Invalid(
                    settings.repoId() != null ? "branch" : "resource",
                    settings.repoId() != null
                            ? "name what to act on: branch (a git branch, e.g. main) or resource (e.g. db/migrations)"
                            : "name what to act on: resource (e.g. db/migrations)");
        }
        if (branch != null) {
            return branch(branch);
        }
        return new Target(plainResource(resource, settings.repoId()), null);
    }

    /**
     * {@code resource} as the argument {@code resource} names it: a well-formed name that is not a git
     * branch (branches are named by {@code branch}, so that fence records their expected SHA).
     *
     * @param repoId the server's repository, for the message
     */
    static String plainResource(String resource, String repoId) {
        try {
            Names.require("resource", resource);
        } catch (InvalidInputException e) {
            throw new Arguments.Invalid("resource", e.getMessage());
        }
        if (Resources.parse(resource).isPresent()) {
            throw new Arguments.Invalid(
                    "resource",
                    "argument resource: '" + resource + "' is a git branch; name it with branch (this server's"
                            + " repository: " + (repoId == null ? "none, started without --repo" : repoId) + ")");
        }
        return resource;
    }

    private Target branch(String branch) {
        String ref;
        try {
            ref = RefNames.full(branch);
        } catch (InvalidInputException e) {
            throw new Arguments.Invalid("branch", "argument branch: " + e.getMessage());
        }
        if (!ref.startsWith("refs/heads/")) {
            throw new Arguments.Invalid("branch", "argument branch must name a branch (main, or refs/heads/main)");
        }
        String name = shortBranch(ref);
        if (name.equals("HEAD") || name.startsWith("-")) {
            throw new Arguments.Invalid(
                    "branch", "argument branch: git takes no branch named '" + name + "'; name the branch itself");
        }
        // An invisible or formatting character (zero-width space, a bidi override, a soft hyphen, a
        // no-break space) makes a branch that reads as another one in every message and in the audit page.
        name.codePoints()
                .filter(c -> Character.getType(c) == Character.FORMAT
                        || Character.isSpaceChar(c)
                        || Character.isISOControl(c))
                .findFirst()
                .ifPresent(c -> {
                    throw new Arguments.Invalid(
                            "branch",
                            "argument branch contains the invisible character U+" + String.format("%04X", c)
                                    + ", which would make it read as another branch");
                });
        return new Target(Resources.forRef(settings.repoId(), ref), ref);
    }

    private ToolResult acquire(Arguments a) {
        Target t = target(a);
        Duration ttl = a.duration("ttl", settings.defaultTtl());
        String grantSha = t.ref() == null ? null : remoteTip(t.ref());
        AcquireOutcome o = leases.acquire(t.resource(), settings.holder(), ttl, grantSha, shownGrant(t));
        if (o instanceof AcquireOutcome.Busy b) {
            Map<String, Object> m = Json.object();
            m.put("resource", b.resource());
            m.put("holder", b.holder());
            m.put("expiresAt", Json.instant(b.expiresAt()));
            String whose = b.holder().equals(settings.holder())
                    ? " under your name, by a grant this server does not have (another session's, or one taken"
                            + " before a restart without --grants): a name is no proof of being its holder, so it"
                            + " is not taken again by naming it."
                    : ".";
            return ToolResult.failure(
                    "busy",
                    "busy: " + what(t) + " is held by " + Printable.name(b.holder()) + " until " + b.expiresAt()
                            + whose + " You do not"
                            + " hold it and must not change it; work on something else, or report that it is taken."
                            + " Do not wait for it in a loop.",
                    m);
        }
        Grant g = ((AcquireOutcome.Acquired) o).grant();
        held.put(t.resource(), new Held(g.token(), g.proof(), ttl));
        if (settings.grantsDir() != null) {
            GrantFiles.keep(settings.grantsDir(), g);
        }
        Map<String, Object> m = target(t);
        m.put("acquired", true);
        m.put("holder", g.holder());
        m.put("token", g.token());
        m.put("expiresAt", Json.instant(g.expiresAt()));
        m.put("ttl", Durations.format(ttl));
        m.put("tip", Json.tip(g.tip()));
        Map<String, Object> previous = lease(g.previous());
        m.put("previous", previous);
        List<String> lines = new ArrayList<>();
        lines.add("You hold " + what(t) + " with token " + g.token() + " until " + g.expiresAt() + " (TTL "
                + Durations.format(ttl) + "; every tool call on it renews it).");
        if (g.previous() != null) {
            Lease p = g.previous();
            lines.add("Previous lease: " + Printable.name(p.holder()) + " token " + p.token() + " (" + g.previousEnded()
                    + ").");
        }
        if (g.tip() != null) {
            lines.add("Last write fence admitted here: " + describe(g.tip()) + ".");
        }
        if (t.ref() != null) {
            lines.add(
                    ObjectIds.isZero(grantSha)
                            ? "The branch does not exist on the remote yet."
                            : "Remote tip now: " + ObjectIds.abbreviate(grantSha)
                                    + ". Plan from it; push with push_branch.");
        }
        return ToolResult.ok(lines, m);
    }

    private ToolResult renew(Arguments a) {
        Target t = target(a);
        Held h = hold(t);
        if (a.has("ttl")) {
            h = new Held(h.token(), h.proof(), a.duration("ttl", h.ttl()));
            held.put(t.resource(), h);
        }
        Lease l = beat(t, true).lease();
        Map<String, Object> m = target(t);
        m.put("renewed", true);
        m.put("holder", settings.holder());
        m.put("token", l.token());
        m.put("expiresAt", Json.instant(l.expiresAt()));
        m.put("ttl", Durations.format(h.ttl()));
        return ToolResult.ok(
                List.of("Renewed: you hold " + what(t) + " with token " + l.token() + " until " + l.expiresAt() + "."),
                m);
    }

    private ToolResult release(Arguments a) {
        Target t = target(a);
        Held h = hold(t);
        CheckOutcome c = leases.release(t.resource(), settings.holder(), h.token(), h.proof());
        drop(t.resource(), h);
        if (c instanceof CheckOutcome.Lost lost) {
            return ToolResult.fenced(lost.fenced(), t.reread());
        }
        Map<String, Object> m = target(t);
        m.put("released", true);
        m.put("token", h.token());
        return ToolResult.ok(
                List.of("Released " + what(t) + " (token " + h.token() + "). You hold nothing there now."), m);
    }

    /** {@code lease_status} and {@code read_state}: reads never fail because the lease was lost. */
    private ToolResult state(Target t, boolean reread) {
        Beat before = beat(t, false);
        List<String> lines = new ArrayList<>();
        Map<String, Object> m = target(t);
        if (reread && t.ref() != null) {
            fetch(t.ref());
            String remoteTip = remoteTip(t.ref());
            m.put("remoteTip", ObjectIds.isZero(remoteTip) ? null : remoteTip);
            lines.add("Remote " + settings.remote() + " " + shortBranch(t.ref()) + ": "
                    + (ObjectIds.isZero(remoteTip)
                            ? "no such branch."
                            : "tip " + ObjectIds.abbreviate(remoteTip) + " (fetched; see git log " + settings.remote()
                                    + "/" + shortBranch(t.ref()) + ")."));
        }
        Status s = leases.status(t.resource());
        Beat after = before.lease() != null ? beat(t, false) : Beat.NONE;
        Lease current = s.state().lease();
        boolean currentIsLatest =
                current != null && current.token() == s.state().latestGranted();
        // Held here (just renewed), or held by this holder from elsewhere (not taken over by a read).
        Lease mine = after.lease() != null
                ? after.lease()
                : before.lost() == null
                                && currentIsLatest
                                && current.holder().equals(settings.holder())
                                && !current.released()
                        ? current
                        : null;
        boolean yours = mine != null;
        m.put("held", yours);
        if (yours) {
            m.put("token", mine.token());
            m.put("expiresAt", Json.instant(mine.expiresAt()));
        }
        m.put("latestGranted", s.state().latestGranted());
        m.put("highestAccepted", s.state().highestAccepted());
        m.put("lease", currentIsLatest ? lease(current, s) : null);
        m.put("tip", Json.tip(s.state().tip()));
        m.put("at", Json.instant(s.at()));
        if (yours) {
            lines.add("As of " + s.at() + " you hold " + what(t) + " with token "
                    + mine.token() + " until " + mine.expiresAt()
                    + (mine.isLive(s.at()) ? "." : " (lapsed; no one has taken it since; renew it before you write)."));
        } else if (currentIsLatest && current.isLive(s.at())) {
            lines.add("As of " + s.at() + " " + Printable.name(current.holder()) + " holds " + what(t) + " with token "
                    + current.token() + " until " + current.expiresAt() + "; you hold no lease there.");
        } else {
            lines.add("As of " + s.at() + " no one holds a live lease on " + what(t) + " (latest token "
                    + s.state().latestGranted() + "); you hold no lease there.");
        }
        if (s.state().tip() != null) {
            lines.add("Last write fence admitted: " + describe(s.state().tip()) + ".");
        }
        Fenced lost = before.lost() != null ? before.lost() : after.lost();
        if (lost != null) {
            m.put("leaseLost", ToolResult.fenced(lost, t.reread()).structured());
            lines.add("");
            lines.addAll(FencedMessage.lines(lost, t.reread()));
        }
        return ToolResult.ok(lines, m);
    }

    private ToolResult push(Arguments a) {
        Target t = branch(a.string("branch", true));
        Held h = hold(t);
        beat(t, true);
        PushOutcome o = new FencedPush(leases, remotes)
                .push(new FencedPush.Request(
                        settings.cloneDir(),
                        settings.remote(),
                        t.ref(),
                        t.resource(),
                        null,
                        settings.holder(),
                        h.token(),
                        h.proof()));
        if (o instanceof PushOutcome.Fenced f) {
            return ToolResult.fencedLines(f.lines(), t.resource(), t.ref(), f.token(), t.reread());
        }
        if (o instanceof PushOutcome.Rejected r) {
            Map<String, Object> m = target(t);
            m.put("remoteStatus", r.status());
            m.put("token", r.token());
            return ToolResult.failure("rejected", String.join("\n", r.lines()), m);
        }
        PushOutcome.Pushed p = (PushOutcome.Pushed) o;
        Beat after = beat(t, false);
        Map<String, Object> m = target(t);
        m.put("pushed", true);
        m.put("upToDate", p.upToDate());
        m.put("token", p.token());
        m.put("tip", p.newSha());
        m.put(
                "expiresAt",
                after.lease() == null ? null : Json.instant(after.lease().expiresAt()));
        List<String> lines = new ArrayList<>();
        lines.add((p.upToDate() ? "Up to date: " : "Pushed ") + shortBranch(t.ref()) + " under token " + p.token()
                + ": the remote is at " + ObjectIds.abbreviate(p.newSha()) + ".");
        lines.addAll(p.lines());
        if (after.lost() != null) {
            m.put("leaseLost", ToolResult.fenced(after.lost(), t.reread()).structured());
            lines.addAll(FencedMessage.lines(after.lost(), t.reread()));
        }
        return ToolResult.ok(lines, m);
    }

    /** {@link Grants#under}. */
    private ToolResult under(String resource, String reread, GrantedWrite write) {
        Target t = new Target(resource, null);
        try {
            Held h = hold(t);
            beat(t, true);
            ToolResult r = write.write(h.token(), h.proof());
            Beat after = beat(t, false);
            if (!r.error() && after.lease() != null) {
                Map<String, Object> m = new LinkedHashMap<>(r.structured());
                m.put("expiresAt", Json.instant(after.lease().expiresAt()));
                return new ToolResult(false, r.text(), m);
            }
            return r;
        } catch (LostLease l) {
            return ToolResult.fenced(l.fenced, reread);
        }
    }

    // ---- grants and the heartbeat -------------------------------------------------------------------

    /**
     * The holder's grant on {@code t}: the one this server keeps, else the holder's current lease taken
     * over with its grant kept in the grants directory, else with the proof the lease port issues for it
     * (which a port in direct mode refuses: a holder's name and token are public).
     *
     * @throws LostLease when the holder does not hold it
     */
    private Held hold(Target t) {
        Held h = held.get(t.resource());
        if (h != null) {
            return h;
        }
        LeaseStanding s = leases.standing(t.resource(), settings.holder());
        if (s instanceof LeaseStanding.NotHeld n) {
            throw new LostLease(n.fenced(), t.reread());
        }
        long token = ((LeaseStanding.Holds) s).lease().token();
        Grant kept = settings.grantsDir() == null
                ? null
                : GrantFiles.readDir(settings.grantsDir()).find(t.resource(), settings.holder(), token);
        if (kept != null) {
            Duration ttl = kept.grantedAt() == null || kept.expiresAt() == null
                    ? settings.defaultTtl()
                    : Duration.between(kept.grantedAt(), kept.expiresAt());
            h = new Held(token, kept.proof(), ttl);
        } else {
            var proof = leases.proof(t.resource(), settings.holder(), token);
            if (proof instanceof LeaseOperations.ProofOutcome.Lost lost) {
                throw new LostLease(lost.fenced(), t.reread());
            }
            h = new Held(token, ((LeaseOperations.ProofOutcome.Issued) proof).proof(), settings.defaultTtl());
        }
        held.put(t.resource(), h);
        return h;
    }

    /**
     * The grant an acquire of {@code t} shows, so that it may take the holder's own live lease again: the
     * one this server keeps, unless the grants directory keeps the live lease's grant and this one is older
     * (a restarted server has not taken it up yet; another session of the holder's took the lease again),
     * else null.
     */
    private HeldGrant shownGrant(Target t) {
        Held h = held.get(t.resource());
        HeldGrant mine = h == null ? null : new HeldGrant(h.token(), h.proof());
        if (settings.grantsDir() == null) {
            return mine;
        }
        Lease live = leases.status(t.resource()).liveLease();
        if (live == null
                || !live.holder().equals(settings.holder())
                || (mine != null && mine.token() == live.token())) {
            return mine;
        }
        Grant kept = GrantFiles.readDir(settings.grantsDir()).find(t.resource(), settings.holder(), live.token());
        return kept == null || kept.proof() == null ? mine : HeldGrant.of(kept);
    }

    /** Forgets a grant that is released or lost, here and in the grants directory. */
    private void drop(String resource, Held h) {
        held.remove(resource);
        if (settings.grantsDir() != null) {
            GrantFiles.forget(settings.grantsDir(), resource, settings.holder(), h.token());
        }
    }

    /**
     * Renews the server's grant on {@code t}, if it keeps one: the tool-call heartbeat.
     *
     * @param required throw FENCED when the grant is lost (writes); otherwise report it (reads)
     */
    private Beat beat(Target t, boolean required) {
        Held h = held.get(t.resource());
        if (h == null) {
            return Beat.NONE;
        }
        CheckOutcome c = leases.renew(t.resource(), settings.holder(), h.token(), h.proof(), h.ttl());
        if (c instanceof CheckOutcome.Lost lost) {
            drop(t.resource(), h);
            if (required) {
                throw new LostLease(lost.fenced(), t.reread());
            }
            return new Beat(null, lost.fenced());
        }
        return new Beat(((CheckOutcome.Current) c).lease(), null);
    }

    /** The holder's standing on every resource it was granted, as dated sentences, without expected SHAs. */
    public synchronized List<String> statusLines() {
        HolderStatus.Report r = HolderStatus.of(leases, settings.clock(), settings.holder(), null);
        List<HolderStatus.Entry> entries = new ArrayList<>();
        for (HolderStatus.Entry e : r.entries()) {
            entries.add(new HolderStatus.Entry(
                    e.resource(),
                    e.state(),
                    e.token(),
                    e.current(),
                    e.currentHolder(),
                    e.currentLive(),
                    e.expiresAt(),
                    null));
        }
        return HolderStatus.promptLines(new HolderStatus.Report(r.holder(), r.at(), entries));
    }

    // ---- git ----------------------------------------------------------------------------------------

    private String remoteTip(String ref) {
        return remotes.tip(settings.cloneDir(), remotes.resolve(settings.cloneDir(), settings.remote()), ref);
    }

    /** Updates the clone's remote-tracking ref, so that the model can read what {@code read_state} saw. */
    private void fetch(String ref) {
        Map<String, String> env = new HashMap<>(settings.env());
        env.put("LC_ALL", "C");
        Git.Result r = new Git(env).run(settings.cloneDir(), "fetch", "-q", settings.remote());
        if (r.exit() != 0) {
            throw new ConfigException("cannot fetch " + ref + " from " + settings.remote() + " (git fetch exit "
                    + r.exit() + "): " + r.stderr().strip());
        }
    }

    // ---- wording ------------------------------------------------------------------------------------

    private Map<String, Object> target(Target t) {
        Map<String, Object> m = Json.object();
        m.put("resource", t.resource());
        if (t.ref() != null) {
            m.put("branch", shortBranch(t.ref()));
        }
        return m;
    }

    private static Map<String, Object> lease(Lease l) {
        Map<String, Object> m = Json.lease(l, null);
        if (m != null) {
            m.remove("grantSha");
        }
        return m;
    }

    private static Map<String, Object> lease(Lease l, Status s) {
        Map<String, Object> m = Json.lease(l, s.at());
        m.remove("grantSha");
        return m;
    }

    private static String what(Target t) {
        return t.ref() != null
                ? "branch " + Printable.name(shortBranch(t.ref())) + " (" + Printable.name(t.resource()) + ")"
                : Printable.name(t.resource());
    }

    private static String describe(Tip t) {
        return ObjectIds.abbreviate(t.sha())
                + (t.token() > 0 ? " under token " + t.token() : " without a token")
                + (t.holder() != null ? " by " + Printable.name(t.holder()) : "")
                + " (pushed by " + Printable.name(t.pusher()) + " at " + t.at() + ")";
    }

    static String shortBranch(String ref) {
        return ref.startsWith("refs/heads/") ? ref.substring("refs/heads/".length()) : ref;
    }
}
