package dev.fence.server;

import dev.fence.core.Durations;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Lease;
import dev.fence.core.LeaseOperations.ProofOutcome;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.ObjectIds;
import dev.fence.core.ResourceState;
import dev.fence.core.StoreUnavailableException;
import dev.fence.json.Json;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code /v1/leases/*}: the lease operations, with the JSON of {@code fence lease … --json}, and what
 * {@code fence push} needs around a push in server mode (the proof of the current grant, moving the
 * recorded SHA). Agents act only as the holders their credential names.
 */
final class LeaseApi {
    private final LeaseService leases;
    private final StoreCalls calls;
    private final ServerMetrics metrics;
    private final Clock clock;

    LeaseApi(LeaseService leases, StoreCalls calls, ServerMetrics metrics, Clock clock) {
        this.leases = leases;
        this.calls = calls;
        this.metrics = metrics;
        this.clock = clock;
    }

    Reply acquire(Call call) {
        return counted("acquire", () -> {
            Params p = call.params();
            String resource = p.resource();
            String holder = p.require("holder");
            authorize(call, holder);
            Duration ttl = ttl(p);
            String grantSha = p.text("grantSha");
            AcquireOutcome o = calls.call("acquire", () -> leases.acquire(resource, holder, ttl, grantSha));
            if (o instanceof AcquireOutcome.Busy b) {
                Map<String, Object> m = Json.object();
                m.put("status", "busy");
                m.put("resource", b.resource());
                m.put("holder", b.holder());
                m.put("expiresAt", Json.instant(b.expiresAt()));
                return new Outcome("busy", Reply.json(409, m));
            }
            return new Outcome("granted", Reply.json(200, Json.grant(((AcquireOutcome.Acquired) o).grant())));
        });
    }

    Reply renew(Call call) {
        return counted("renew", () -> {
            Claim c = claim(call);
            String proof = c.params().text("proof");
            Duration ttl = ttl(c.params());
            CheckOutcome o = calls.call("renew", () -> leases.renew(c.resource(), c.holder(), c.token(), proof, ttl));
            return checked(o, "renewed");
        });
    }

    Reply release(Call call) {
        return counted("release", () -> {
            Claim c = claim(call);
            String proof = c.params().text("proof");
            CheckOutcome o = calls.call("release", () -> leases.release(c.resource(), c.holder(), c.token(), proof));
            return checked(o, "released");
        });
    }

    /**
     * {@code POST /v1/leases/move-sha}: after the holder's own successful push, moves the lease's recorded
     * SHA from {@code expectedSha} to {@code newSha}, only while the holder and token are current and the
     * lease still records {@code expectedSha}. The same step {@code fence push} takes on the store in
     * direct mode.
     */
    Reply moveSha(Call call) {
        return counted("move-sha", () -> {
            Claim c = claim(call);
            String expected = objectId(c.params(), "expectedSha");
            String moved = objectId(c.params(), "newSha");
            String proof = c.params().text("proof");
            CheckOutcome o = calls.call(
                    "move-sha", () -> leases.moveGrantSha(c.resource(), c.holder(), c.token(), proof, expected, moved));
            return checked(o, "moved");
        });
    }

    /**
     * {@code POST /v1/leases/proof}: the proof of the current grant, for its holder only. In server mode
     * agents hold no store credentials, so {@code fence push} asks for the proof its push options carry
     * here. Never for a token that is not the resource's current grant to that holder (released ones
     * included): those get the FENCED answer a renewal would.
     */
    Reply proof(Call call) {
        return counted("proof", () -> {
            Claim c = claim(call);
            ProofOutcome o = calls.call("proof", () -> leases.proof(c.resource(), c.holder(), c.token()));
            if (o instanceof ProofOutcome.Lost lost) {
                return new Outcome("fenced", Reply.json(409, Json.fenced(lost.fenced())));
            }
            Map<String, Object> m = Json.object();
            m.put("status", "proof");
            m.put("resource", c.resource());
            m.put("holder", c.holder());
            m.put("token", c.token());
            ProofOutcome.Issued issued = (ProofOutcome.Issued) o;
            m.put("proof", issued.proof());
            m.put("generation", issued.generation());
            return new Outcome("issued", Reply.json(200, m));
        });
    }

    private static String objectId(Params p, String name) {
        String v = p.require(name);
        if (!ObjectIds.isValid(v)) {
            throw new InvalidInputException(
                    "'" + name + "' must be a full object id (40 or 64 lowercase hex digits); got '" + v + "'");
        }
        return v;
    }

    Reply status(Call call) {
        return counted("status", () -> {
            String resource = call.params().resource();
            LeaseService.Status st = calls.call("status", () -> leases.status(resource));
            ResourceState rs = st.state();
            Lease live = st.liveLease();
            Map<String, Object> m = Json.object();
            m.put("resource", resource);
            m.put("generation", st.generation());
            m.put("floor", st.floor());
            m.put("leaseVoid", st.leaseVoid());
            m.put("lease", Json.lease(live, st.at()));
            m.put("lastLease", Json.lease(rs.lease(), st.at()));
            m.put("latestGranted", rs.latestGranted());
            m.put("highestAccepted", rs.highestAccepted());
            m.put("lastWrite", Json.tip(rs.tip()));
            m.put("at", Json.instant(st.at()));
            return new Outcome("ok", Reply.json(200, m));
        });
    }

    private Outcome checked(CheckOutcome o, String verb) {
        if (o instanceof CheckOutcome.Lost lost) {
            return new Outcome("fenced", Reply.json(409, Json.fenced(lost.fenced())));
        }
        CheckOutcome.Current c = (CheckOutcome.Current) o;
        Map<String, Object> m = Json.object();
        m.put("status", verb);
        m.put("resource", c.resource());
        m.putAll(Json.lease(c.lease(), clock.instant()));
        return new Outcome(verb, Reply.json(200, m));
    }

    private static Duration ttl(Params p) {
        String ttl = p.text("ttl");
        return Durations.parsePositive("ttl", ttl == null ? "30s" : ttl);
    }

    /** 403 unless the caller's credential may act as {@code holder}. */
    static void authorize(Call call, String holder, ServerMetrics metrics) {
        if (!call.caller().mayActAs(holder)) {
            metrics.authFailure(403);
            throw HttpError.forbidden(
                    "credential '" + call.caller().name() + "' may not act as holder '" + holder + "'");
        }
    }

    private void authorize(Call call, String holder) {
        authorize(call, holder, metrics);
    }

    private record Outcome(String outcome, Reply reply) {}

    /** What every call on an existing lease names: the resource, the holder (authorized) and its token. */
    private record Claim(Params params, String resource, String holder, long token) {}

    /** Reads and authorizes a {@link Claim}, in the order the errors are reported: resource, holder, token. */
    private Claim claim(Call call) {
        Params p = call.params();
        String resource = p.resource();
        String holder = p.require("holder");
        authorize(call, holder);
        return new Claim(p, resource, holder, p.token("token"));
    }

    private Reply counted(String operation, Supplier<Outcome> work) {
        try {
            Outcome o = work.get();
            metrics.leaseOperation(operation, o.outcome());
            return o.reply();
        } catch (InvalidInputException e) {
            metrics.leaseOperation(operation, "invalid");
            throw e;
        } catch (StoreUnavailableException e) {
            metrics.leaseOperation(operation, "store-unavailable");
            throw e;
        } catch (HttpError e) {
            metrics.leaseOperation(operation, e.status() == 403 ? "forbidden" : "invalid");
            throw e;
        } catch (RuntimeException e) {
            metrics.leaseOperation(operation, "error");
            throw e;
        }
    }
}
