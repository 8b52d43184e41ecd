package dev.fence.integrate;

import dev.fence.client.HolderStatus;
import dev.fence.core.Fenced;
import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Lease;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.json.GrantFiles;
import dev.fence.json.Json;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the hooks {@code fence integrate claude-code} installs do, one method each. Claude Code runs a hook
 * command with the event as JSON on stdin ({@code hook_event_name}, {@code tool_name}, {@code
 * tool_input}, …); exit 0 lets the tool call go on, exit 2 blocks a {@code PreToolUse} call (and feeds
 * stderr to the model, which a {@code PostToolUse} hook's exit 2 does too), and a {@code SessionStart}
 * hook's stdout is added to the context.
 */
public final class ClaudeCodeHooks {
    private ClaudeCodeHooks() {}

    /** A hook's event, as Claude Code sends it on stdin. */
    public record Input(String event, String toolName, Map<String, Object> toolInput, String source) {
        /** The Bash tool's command, or null. */
        public String bashCommand() {
            return "Bash".equals(toolName) && toolInput != null && toolInput.get("command") instanceof String c
                    ? c
                    : null;
        }
    }

    /**
     * Reads the event JSON; an empty input reads as an event with no fields.
     *
     * @throws InvalidInputException when it is not a JSON object
     */
    @SuppressWarnings("unchecked")
    public static Input parse(String json) {
        if (json == null || json.isBlank()) {
            return new Input(null, null, Map.of(), null);
        }
        Map<String, Object> m;
        try {
            m = Json.readObject(json);
        } catch (IOException e) {
            throw new InvalidInputException("the hook's input is not the JSON object Claude Code sends: "
                    + e.getMessage().lines().findFirst().orElse(""));
        }
        Object input = m.get("tool_input");
        return new Input(
                string(m.get("hook_event_name")),
                string(m.get("tool_name")),
                input instanceof Map<?, ?> i ? (Map<String, Object>) i : Map.of(),
                string(m.get("source")));
    }

    private static String string(Object o) {
        return o instanceof String s ? s : null;
    }

    /**
     * What the heartbeat did.
     *
     * @param renewed the leases as renewed
     * @param lost what a renewal found gone, in the FENCED format
     * @param unproven the leases it left alone for want of their grant's proof
     */
    public record Heartbeat(List<Renewed> renewed, List<Fenced> lost, List<Unproven> unproven) {}

    /** One renewed lease. */
    public record Renewed(String resource, Lease lease) {}

    /** A lease the holder holds whose grant the heartbeat does not keep, so it was not renewed. */
    public record Unproven(String resource, long token) {}

    /**
     * The tool-call heartbeat: renews to {@code ttl} every lease {@code holder} holds (live, or lapsed and
     * not taken since) whose grant is {@code kept}, with that grant's proof. Leases it already lost are left
     * alone: {@code fence status} reports them.
     *
     * <p>A lease whose grant is not kept is not renewed ({@link Heartbeat#unproven}) unless the lease port
     * has authenticated the caller as the holder ({@code fence serve}): in direct mode a holder's name and
     * token are public, so renewing on them alone would let whoever runs this hook with {@code --holder
     * NAME} keep another agent's lease alive.
     */
    public static Heartbeat renewAll(
            LeaseOperations leases, Clock clock, String holder, Duration ttl, GrantFiles.Kept kept) {
        List<Renewed> renewed = new ArrayList<>();
        List<Fenced> lost = new ArrayList<>();
        List<Unproven> unproven = new ArrayList<>();
        for (HolderStatus.Entry e : HolderStatus.of(leases, clock, holder, null).entries()) {
            if (e.state() != HolderStatus.State.HELD && e.state() != HolderStatus.State.LAPSED) {
                continue;
            }
            Grant g = kept.find(e.resource(), holder, e.token());
            if (g == null && !leases.holderAuthenticated()) {
                unproven.add(new Unproven(e.resource(), e.token()));
                continue;
            }
            CheckOutcome c = leases.renew(e.resource(), holder, e.token(), g == null ? null : g.proof(), ttl);
            if (c instanceof CheckOutcome.Lost l) {
                lost.add(l.fenced());
            } else {
                renewed.add(new Renewed(e.resource(), ((CheckOutcome.Current) c).lease()));
            }
        }
        return new Heartbeat(List.copyOf(renewed), List.copyOf(lost), List.copyOf(unproven));
    }

    /** What {@code SessionStart} prints: the live lease state, as fresh observations for the context. */
    public static List<String> sessionStart(LeaseOperations leases, Clock clock, String holder) {
        List<String> out = new ArrayList<>();
        out.add("fence: the live lease state of " + holder + ", read from the lease store just now. It replaces"
                + " anything an earlier summary says you hold:");
        out.addAll(HolderStatus.promptLines(HolderStatus.of(leases, clock, holder, null)));
        return out;
    }

    /**
     * Why the Bash tool must not run {@code command}, or empty when it may. Refused: any {@code git push}
     * of a branch (every branch is fenced by default), and any forced push whose expected SHA is not
     * spelled out ({@code --force}, {@code -f}, {@code +refspec}, {@code --force-with-lease} without
     * {@code =ref:sha}). Allowed: {@code fence push}, dry runs, and pushes of tags only that force nothing
     * without an expected SHA.
     *
     * <p>A guardrail, not the fence: a command can hide a push from any parser ({@code sh -c}, an alias, a
     * script). The remote's hook is what refuses a stale token.
     */
    public static Optional<String> guardBash(String command, String holder, String repoId) {
        if (command == null) {
            return Optional.empty();
        }
        return GitPushCheck.refusal(command, BashWords.commands(command))
                .map(why -> why + "\n" + instead(holder, repoId));
    }

    private static String instead(String holder, String repoId) {
        return "Push with the push_branch tool (fence mcp), or run: fence push"
                + (repoId != null ? " --repo " + repoId : " --repo <repo-id>") + " --holder " + holder
                + " [--branch BRANCH]. It carries your lease's token and pushes against the remote tip your lease"
                + " recorded, so it cannot overwrite anyone else's work. Do not try to get around this check"
                + " (another shell, a script, an alias): the remote's fence hook refuses a push without a current"
                + " token anyway, and a forced push over someone else's commits is FENCED.";
    }
}
