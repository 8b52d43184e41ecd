package dev.fence.server;

import dev.fence.core.Durations;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Lease;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.ResourceState;
import dev.fence.core.StoreUnavailableException;
import dev.fence.json.Json;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code /v1/leases/*}: the lease operations, with the JSON of {@code fence lease … --json}. Agents act
 * only as the holders their credential names.
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
            Params p = call.params();
            String resource = p.resource();
            String holder = p.require("holder");
            authorize(call, holder);
            long token = p.token("token");
            String proof = p.text("proof");
            Duration ttl = ttl(p);
            CheckOutcome o = calls.call("renew", () -> leases.renew(resource, holder, token, proof, ttl));
            return checked(o, "renewed");
        });
    }

    Reply release(Call call) {
        return counted("release", () -> {
            Params p = call.params();
            String resource = p.resource();
            String holder = p.require("holder");
            authorize(call, holder);
            long token = p.token("token");
            String proof = p.text("proof");
            CheckOutcome o = calls.call("release", () -> leases.release(resource, holder, token, proof));
            return checked(o, "released");
        });
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

    private void authorize(Call call, String holder) {
        if (!call.caller().mayActAs(holder)) {
            metrics.authFailure(403);
            throw HttpError.forbidden(
                    "credential '" + call.caller().name() + "' may not act as holder '" + holder + "'");
        }
    }

    private record Outcome(String outcome, Reply reply) {}

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
