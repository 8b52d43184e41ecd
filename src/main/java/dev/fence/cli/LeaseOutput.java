package dev.fence.cli;

import dev.fence.core.FencedMessage;
import dev.fence.core.Grant;
import dev.fence.core.Lease;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.ObjectIds;
import dev.fence.core.Printable;
import dev.fence.core.Tip;
import dev.fence.json.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** How lease outcomes are printed, human and JSON, and which exit code each gets. */
final class LeaseOutput {
    private LeaseOutput() {}

    static int acquired(Context ctx, AcquireOutcome outcome, boolean json) {
        return acquired(ctx, outcome, json, null);
    }

    /**
     * As {@link #acquired(Context, AcquireOutcome, boolean)}, for an acquire that named {@code holder}: when
     * the live lease is that holder's own, the message says why naming it did not take it again.
     */
    static int acquired(Context ctx, AcquireOutcome outcome, boolean json, String holder) {
        if (outcome instanceof AcquireOutcome.Busy b) {
            if (json) {
                Map<String, Object> m = Json.object();
                m.put("status", "busy");
                m.put("resource", b.resource());
                m.put("holder", b.holder());
                m.put("expiresAt", Json.instant(b.expiresAt()));
                ctx.out().println(Json.write(m));
            } else {
                ctx.err()
                        .println("busy: " + Printable.name(b.resource()) + " is held by " + Printable.name(b.holder())
                                + " until " + b.expiresAt()
                                + " (" + until(ctx, b.expiresAt()) + ")");
                if (b.holder().equals(holder)) {
                    ctx.err()
                            .println("  the live lease is the holder's you named, and this acquire did not show its"
                                    + " grant: a name is public, the grant's proof is what shows an acquire is the"
                                    + " holder's. To take it again under a new token, acquire with --grant-file FILE"
                                    + " holding that grant (as 'fence lease acquire --grant-file FILE' wrote it), or"
                                    + " with --token N and its proof (--proof or $FENCE_PROOF); or"
                                    + " release it under its grant first; or wait until it lapses");
                }
            }
            return ExitCode.BUSY.code();
        }
        Grant g = ((AcquireOutcome.Acquired) outcome).grant();
        warnOfClockSkew(ctx, g.grantedAt());
        if (json) {
            ctx.out().println(Json.write(Json.grant(g)));
            return ExitCode.OK.code();
        }
        ctx.out()
                .println("granted " + Printable.name(g.resource()) + " to " + Printable.name(g.holder()) + ": token "
                        + g.token() + ", expires " + g.expiresAt() + " (" + until(ctx, g.expiresAt()) + ")");
        if (g.previous() != null) {
            Lease p = g.previous();
            ctx.out()
                    .println("  previous lease: " + Printable.name(p.holder()) + " token " + p.token() + " ("
                            + g.previousEnded() + ")");
        }
        if (g.tip() != null) {
            ctx.out().println("  current tip: " + describe(g.tip()));
        }
        if (g.grantSha() != null) {
            ctx.out()
                    .println("  expected remote SHA: "
                            + (ObjectIds.isZero(g.grantSha()) ? "none (the branch must not exist yet)" : g.grantSha()));
        }
        ctx.out().println("  the proof is not shown here; use --json to read it for -o fence-proof=...");
        return ExitCode.OK.code();
    }

    static int checked(Context ctx, CheckOutcome outcome, boolean json, String verb) {
        if (outcome instanceof CheckOutcome.Lost lost) {
            if (json) {
                ctx.out().println(Json.write(Json.fenced(lost.fenced())));
            }
            FencedMessage.lines(lost.fenced()).forEach(ctx.err()::println);
            return ExitCode.FENCED.code();
        }
        CheckOutcome.Current c = (CheckOutcome.Current) outcome;
        if (json) {
            Map<String, Object> m = Json.object();
            m.put("status", verb);
            m.put("resource", c.resource());
            m.putAll(Json.lease(c.lease(), ctx.clock().instant()));
            ctx.out().println(Json.write(m));
        } else {
            Lease l = c.lease();
            ctx.out()
                    .println(verb + " " + c.resource() + " for " + l.holder() + ": token " + l.token()
                            + (l.released()
                                    ? ""
                                    : ", expires " + l.expiresAt() + " (" + until(ctx, l.expiresAt()) + ")"));
        }
        return ExitCode.OK.code();
    }

    /** How far this machine's clock may be from the store's before it is reported. */
    static final Duration CLOCK_SKEW_REPORTED = Duration.ofSeconds(30);

    /**
     * Reports, on stderr, a clock far from the store's: the store's clock decides lease expiry, so a lease
     * read against a skewed local clock seems to last longer or shorter than it does. {@code storeTime} is
     * a time the store just stamped (a grant's), so the gap also holds one round trip.
     */
    static void warnOfClockSkew(Context ctx, Instant storeTime) {
        Duration skew = Duration.between(storeTime, ctx.clock().instant());
        if (skew.abs().compareTo(CLOCK_SKEW_REPORTED) > 0) {
            ctx.err()
                    .println("warning: this machine's clock is " + human(skew.abs())
                            + (skew.isNegative() ? " behind" : " ahead of") + " the store's (" + storeTime
                            + "); lease expiry follows the store's clock. Fix this machine's time (NTP).");
        }
    }

    static String describe(Tip t) {
        return ObjectIds.abbreviate(t.sha()) + (t.token() > 0 ? " under token " + t.token() : " without a token")
                + (t.holder() != null ? " by " + Printable.name(t.holder()) : "") + " (pushed by "
                + Printable.name(t.pusher()) + " at " + t.at() + ")";
    }

    static String until(Context ctx, Instant t) {
        Duration d = Duration.between(ctx.clock().instant(), t);
        if (d.isNegative() || d.isZero()) {
            return "expired " + human(d.negated()) + " ago";
        }
        return "in " + human(d);
    }

    private static String human(Duration d) {
        long s = d.toSeconds();
        if (s < 120) {
            return s + "s";
        } else if (s < 7200) {
            return (s / 60) + "m";
        }
        return (s / 3600) + "h";
    }
}
