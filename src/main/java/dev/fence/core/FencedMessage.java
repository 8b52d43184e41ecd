package dev.fence.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The one format every client and the hook use to report a refusal (design §5).
 *
 * <p>The first line is for machines: {@code FENCED resource=<r> ref=<ref> token=<n> current=<m>
 * reason=<code>} ({@code ref=-} for resources that are not git refs). The lines after it are written
 * for a language model: the lease is gone, this is not transient, do not work around it, re-read and
 * re-plan, stop if the goal is already met. Refusals that are not about ownership (store down, malformed
 * input, contention) start with {@code REJECTED} instead and say what to do.
 *
 * <p>Never contains a proof.
 */
public final class FencedMessage {
    private static final Set<Reason> FENCING = EnumSet.of(
            Reason.STALE_TOKEN,
            Reason.SUPERSEDED,
            Reason.FOREIGN_OVERWRITE,
            Reason.BAD_PROOF,
            Reason.OLD_GENERATION,
            Reason.TOKEN_REQUIRED,
            Reason.TOKENLESS_OVERWRITE,
            Reason.RELEASED,
            Reason.NOT_HOLDER,
            Reason.DUPLICATE_TOKEN,
            Reason.PUSHER_NOT_HOLDER,
            Reason.REMOTE_CHANGED,
            Reason.FILE_CHANGED);

    /** Longest detail shown: details quote names and paths, each bounded, and a few words around them. */
    private static final int MAX_DETAIL = 2000;

    private FencedMessage() {}

    /** {@code HH:mm:ssZ} in UTC. */
    static String timeOfDay(Instant at) {
        long s = Math.floorMod(at.getEpochSecond(), 86_400L);
        return twoDigits(s / 3600) + ":" + twoDigits(s / 60 % 60) + ":" + twoDigits(s % 60) + "Z";
    }

    private static String twoDigits(long n) {
        return n < 10 ? "0" + n : Long.toString(n);
    }

    /** True when {@code reason} means the writer lost (or never had) the right to write: a FENCED outcome. */
    public static boolean isFencing(Reason reason) {
        return FENCING.contains(reason);
    }

    /** The machine line alone. */
    public static String machineLine(Fenced f) {
        return (isFencing(f.reason()) ? "FENCED" : "REJECTED") + " resource=" + field(f.resource()) + " ref="
                + (f.ref() == null ? "-" : field(f.ref())) + " token=" + f.token() + " current=" + f.current()
                + " reason=" + f.reason().code();
    }

    /**
     * A value of the machine line: as it is, or, when it holds a space, a quote or a backslash (a resource
     * name may), in double quotes with {@code "} and {@code \\} escaped, so that the value can never end
     * early and be read as fields of its own ({@code resource=x reason=store-down}).
     */
    private static String field(String value) {
        if (value.indexOf(' ') < 0 && value.indexOf('"') < 0 && value.indexOf('\\') < 0) {
            return value;
        }
        return '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }

    /**
     * The fields of a machine line ({@link #machineLine}), as a client that got the message as text (a
     * remote's hook, through git) reads them back.
     *
     * @param fencing true for {@code FENCED}, false for {@code REJECTED}
     * @param ref the full ref name, or null for {@code ref=-}
     * @param reason the reason code as printed
     */
    public record MachineLine(boolean fencing, String resource, String ref, long token, long current, String reason) {}

    /**
     * Reads a line written by {@link #machineLine}; empty for any other line. A field that is missing or not
     * a number reads as null or 0, so a line from an older or foreign hook still reads.
     */
    public static Optional<MachineLine> parseMachineLine(String line) {
        boolean fencing = line != null && line.startsWith("FENCED ");
        if (line == null || !(fencing || line.startsWith("REJECTED "))) {
            return Optional.empty();
        }
        Map<String, String> fields = new HashMap<>();
        String rest = line.substring(line.indexOf(' ') + 1);
        int i = 0;
        while (i < rest.length()) {
            int end = rest.indexOf(' ', i);
            int eq = rest.indexOf('=', i);
            if (eq > i && (end < 0 || eq < end) && eq + 1 < rest.length() && rest.charAt(eq + 1) == '"') {
                // A quoted value (see field): up to the next unescaped quote.
                StringBuilder value = new StringBuilder();
                int j = eq + 2;
                while (j < rest.length() && rest.charAt(j) != '"') {
                    char c = rest.charAt(j);
                    if (c == '\\' && j + 1 < rest.length()) {
                        c = rest.charAt(++j);
                    }
                    value.append(c);
                    j++;
                }
                fields.putIfAbsent(rest.substring(i, eq), value.toString());
                i = j + 1;
                continue;
            }
            String word = end < 0 ? rest.substring(i) : rest.substring(i, end);
            int at = word.indexOf('=');
            if (at > 0) {
                fields.putIfAbsent(word.substring(0, at), word.substring(at + 1));
            }
            i = end < 0 ? rest.length() : end + 1;
        }
        String ref = fields.get("ref");
        return Optional.of(new MachineLine(
                fencing,
                fields.get("resource"),
                ref == null || ref.equals("-") ? null : ref,
                number(fields.get("token")),
                number(fields.get("current")),
                fields.get("reason")));
    }

    private static long number(String s) {
        if (s == null) {
            return 0;
        }
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Every line of the message, machine line first. */
    public static List<String> lines(Fenced f) {
        return lines(f, null);
    }

    /**
     * Every line of the message, machine line first, naming {@code reread} as the command that re-reads
     * the resource (for resources that are not leases' own: {@code fence migrate status …}, {@code fence
     * read --path …}); null for the lease's status.
     */
    public static List<String> lines(Fenced f, String reread) {
        List<String> out = new ArrayList<>();
        out.add(machineLine(f));
        String what = Printable.name(f.ref() != null ? f.ref() : f.resource());
        if (!isFencing(f.reason())) {
            out.add(rejectedSentence(f, what));
            if (f.detail() != null) {
                out.add(Printable.escape(f.detail(), MAX_DETAIL) + ".");
            }
            return out;
        }
        out.add(headline(f, what));
        if (f.detail() != null) {
            out.add("Detail: " + Printable.escape(f.detail(), MAX_DETAIL) + ".");
        }
        StringBuilder state = new StringBuilder();
        if (f.currentHolder() != null) {
            state.append("Current lease holder: ").append(Printable.name(f.currentHolder()));
            if (f.current() > 0) {
                state.append(" (token ").append(f.current()).append(")");
            }
            state.append(". ");
        }
        if (f.tip() != null) {
            Tip t = f.tip();
            state.append("Current tip of ").append(what).append(": ").append(ObjectIds.abbreviate(t.sha()));
            state.append(", written ");
            if (t.token() > 0) {
                state.append("under token ").append(t.token());
                if (t.holder() != null) {
                    state.append(" by ").append(Printable.name(t.holder()));
                }
            } else {
                state.append("without a token by ").append(Printable.name(t.pusher()));
            }
            state.append(" at ").append(timeOfDay(t.at())).append('.');
        }
        if (state.length() > 0) {
            out.add(state.toString().trim());
        }
        out.add("This is NOT a transient error. Do not retry, rebase, renumber, force-push, drop the token"
                + " or switch branches to get around it.");
        if (liveLease(f)) {
            out.add("Anything your plan, memory or context summary says about this branch's content is stale.");
        } else {
            out.add("Anything your plan, memory or context summary says you \"hold\" on this resource is stale.");
        }
        out.add("Next step: re-read the resource (" + (reread != null ? reread : rereadHint(f))
                + ") and re-plan from what is actually there.");
        out.add("If your goal is already met by the current state, report that and stop."
                + (liveLease(f)
                        ? " To write again you must acquire a new lease: it records the branch as it is now"
                                + " (your lease is still live, so show its grant: the same --grant-file, or --token with its proof)."
                        : " To write again you must acquire a new lease."));
        return out;
    }

    /**
     * True for a remote that moved under a lease that is still the latest grant: the writer was not fenced
     * off by another lease, the branch changed outside it (design §5 names what happened, not a loss of
     * ownership that did not happen).
     */
    private static boolean liveLease(Fenced f) {
        return f.reason() == Reason.REMOTE_CHANGED && f.token() > 0 && f.token() == f.current();
    }

    private static String headline(Fenced f, String what) {
        return switch (f.reason()) {
            case STALE_TOKEN -> "You no longer own " + what + ": your token " + f.token()
                    + " is older than a token that has already written here.";
            case SUPERSEDED -> "You no longer own " + what + ": your lease (token " + f.token()
                    + ") was superseded by token " + f.current() + ".";
            case FOREIGN_OVERWRITE -> f.ref() == null
                    ? "You may not overwrite " + what + ": what you would replace was not written under your token "
                            + f.token() + "."
                    : "You may not overwrite " + what
                            + ": the push would discard commits that were not written under your token " + f.token()
                            + ".";
            case FILE_CHANGED -> "You may not write " + what
                    + ": the file changed since you read it, so what you planned from is stale.";
            case BAD_PROOF -> (f.ref() == null ? "The write to " : "The push to ") + what + " did not prove token "
                    + f.token()
                    + ": a token number alone is not a lease.";
            case OLD_GENERATION -> "Your token " + f.token() + " on " + what
                    + " is void: the fence store lost its data after it was granted.";
            case TOKEN_REQUIRED -> "Pushes to " + what + " must carry a lease token: you have no lease here.";
            case TOKENLESS_OVERWRITE -> "A push without a token may not rewrite or delete " + what
                    + ": it would discard commits written under a lease.";
            case RELEASED -> "You no longer own " + what + ": your lease (token " + f.token() + ") was released.";
            case NOT_HOLDER -> "You do not hold the lease on " + what + ".";
            case REMOTE_CHANGED -> liveLease(f)
                    ? "Your lease on " + what + " (token " + f.token() + ") is still the current one, but the"
                            + " remote branch moved since the lease recorded it: someone wrote there outside it, so"
                            + " what you would push was planned from a branch that is no longer there."
                    : "You no longer own " + what + ": a newer token (" + f.current()
                            + ") was granted, and the remote branch moved since your lease recorded it.";
            default -> "Refused: " + f.reason().code() + ".";
        };
    }

    private static String rejectedSentence(Fenced f, String what) {
        return switch (f.reason()) {
            case STORE_DOWN -> "The push to " + what + " was refused because the fence store is unavailable."
                    + " This is an infrastructure problem, not a conflict: report it to the operator.";
            case CONTENDED -> "The push to " + what + " was refused: concurrent pushes kept changing it.";
            case OTHER_REF_REJECTED -> "The push to " + what
                    + " was not applied: another ref of the same push was refused.";
            case MALFORMED -> "The push was refused: its fence options or input are malformed.";
            default -> "The push to " + what + " was refused (" + f.reason().code() + ").";
        };
    }

    private static String rereadHint(Fenced f) {
        var ref = Resources.parse(f.resource());
        if (ref.isPresent()) {
            var g = ref.get();
            return "git fetch origin && git log -5 " + Printable.shellWord("origin/" + shortBranch(g.ref()))
                    + "; fence lease status --repo " + Printable.shellWord(g.repoId()) + " --ref "
                    + Printable.shellWord(g.ref());
        }
        return "fence lease status --resource " + Printable.shellWord(f.resource());
    }

    private static String shortBranch(String ref) {
        return ref.startsWith("refs/heads/") ? ref.substring("refs/heads/".length()) : ref;
    }
}
