package dev.fence.audit;

import dev.fence.core.EventType;
import dev.fence.core.FencedMessage;
import dev.fence.core.LedgerEvent;
import dev.fence.core.ObjectIds;
import dev.fence.core.Printable;
import dev.fence.core.Reason;
import java.io.PrintWriter;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * Renders ledger events for people: a table for queries, and a timeline that lines up lease events and
 * pushes the way an incident review does. Proofs never reach the ledger, so none can be printed here.
 */
public final class AuditFormat {
    private static final DateTimeFormatter STAMP =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter CLOCK =
            DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);

    /** Longest detail shown (a detail quotes a path or a statement's name, each bounded, in a few words). */
    private static final int MAX_DETAIL = 2000;

    private AuditFormat() {}

    /**
     * A table with a header row, columns sized to their content. A retention change has no reason code:
     * its last column says what changed.
     */
    public static void table(List<LedgerEvent> events, PrintWriter out) {
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"TIME (UTC)", "EVENT", "RESOURCE", "HOLDER", "PUSHER", "TOKEN", "OLD..NEW", "REASON"});
        for (LedgerEvent e : events) {
            rows.add(new String[] {
                STAMP.format(e.at()),
                e.type().label(),
                e.ref() != null ? shown(e.repo()) + " " + shown(e.ref()) : shown(e.resource()),
                shown(e.holder()),
                shown(e.pusher()),
                e.token() == 0 ? "-" : Long.toString(e.token()),
                e.oldSha() == null && e.newSha() == null ? "-" : shortSha(e.oldSha()) + ".." + shortSha(e.newSha()),
                e.type() == EventType.RETENTION && e.detail() != null
                        ? Printable.escape(e.detail(), MAX_DETAIL)
                        : dash(e.reason())
            });
        }
        int[] width = new int[rows.get(0).length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                line.append(i == r.length - 1 ? r[i] : pad(r[i], width[i] + 2));
            }
            out.println(line.toString().stripTrailing());
        }
        if (events.isEmpty()) {
            out.println("(no events match)");
        }
    }

    /** One line per event, in time order, readable as a story. */
    public static void timeline(List<LedgerEvent> events, PrintWriter out) {
        for (LedgerEvent e : events) {
            out.println(CLOCK.format(e.at()) + "  " + pad(e.type().label().toUpperCase(java.util.Locale.ROOT), 8)
                    + story(e));
        }
        if (events.isEmpty()) {
            out.println("(no events for this resource)");
        }
    }

    static String story(LedgerEvent e) {
        String where = shown(e.ref() != null ? e.ref() : e.resource());
        String who = shown(e.holder() != null ? e.holder() : e.pusher());
        String holder = shown(e.holder());
        String detail = e.detail() == null ? null : Printable.escape(e.detail(), MAX_DETAIL);
        return switch (e.type()) {
            case GRANT -> where + " -> " + holder + " (token " + e.token() + ")";
            case EXPIRE -> where + ": lease of " + holder + " (token " + e.token() + ") lapsed";
            case RENEW -> where + ": lease of " + holder + " (token " + e.token() + ") renewed after its lapse, held"
                    + " again";
            case RELEASE -> where + ": released by " + holder + " (token " + e.token() + ")";
            case ACCEPT, ALLOW, LANDED -> where + shas(e) + " by " + who + tokenText(e) + pusherText(e)
                    + (isGit(e) || detail == null ? "" : ": " + detail);
            case UNLANDED -> where + shas(e) + " by " + who + tokenText(e) + pusherText(e) + ": admitted ("
                    + dash(e.reason()) + ") but did not land; superseded nothing, not the last write";
            case BUMP -> where + " " + shortSha(e.oldSha()) + ".." + shortSha(e.newSha()) + " by " + shown(e.pusher())
                    + " without a token: counter bumped to " + e.token() + ", outstanding leases superseded";
            case REJECT -> where + shas(e) + " by " + who
                    + tokenText(e) + pusherText(e) + ": " + verdictWord(e.reason()) + " reason=" + dash(e.reason())
                    + (detail == null ? "" : " (" + detail + ")");
            case RETENTION -> "store: " + (detail == null ? "ledger retention changed" : detail) + " by "
                    + shown(e.pusher());
        };
    }

    /** A write outside git (a migration, a file) has no ref and no object ids; its detail says what it was. */
    private static boolean isGit(LedgerEvent e) {
        return e.ref() != null || e.oldSha() != null || e.newSha() != null;
    }

    private static String shas(LedgerEvent e) {
        return isGit(e) ? " " + shortSha(e.oldSha()) + ".." + shortSha(e.newSha()) : "";
    }

    static String verdictWord(String reason) {
        Reason r = reason == null ? null : Reason.fromCode(reason);
        return r != null && FencedMessage.isFencing(r) ? "FENCED" : "REJECTED";
    }

    private static String tokenText(LedgerEvent e) {
        return e.token() == 0 ? " (no token)" : " (token " + e.token() + ")";
    }

    private static String pusherText(LedgerEvent e) {
        return e.pusher() != null && e.holder() != null && !e.pusher().equals(e.holder())
                ? ", pushed as " + shown(e.pusher())
                : "";
    }

    private static String shortSha(String sha) {
        if (sha == null) {
            return "?";
        }
        return ObjectIds.isZero(sha) ? "0000000" : sha.substring(0, Math.min(7, sha.length()));
    }

    /**
     * A name as the ledger's text shows it: {@code -} for none, else {@link Printable#name}, so that a name
     * holding spaces, line breaks or escape sequences reads as one value and cannot forge a row.
     */
    private static String shown(String name) {
        return name == null || name.isEmpty() ? "-" : Printable.name(name);
    }

    private static String dash(String s) {
        return s == null || s.isEmpty() ? "-" : s;
    }

    private static String pad(String s, int w) {
        return s.length() >= w ? s + " " : s + " ".repeat(w - s.length());
    }
}
