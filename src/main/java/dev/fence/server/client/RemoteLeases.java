package dev.fence.server.client;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.Durations;
import dev.fence.core.Fenced;
import dev.fence.core.HeldGrant;
import dev.fence.core.InternalException;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.LedgerEvent;
import dev.fence.core.Proofs;
import dev.fence.core.ResourceState;
import dev.fence.json.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The lease port through {@code fence serve} ("server mode", {@code --server URL}): the same outcomes as
 * {@link LeaseService}, so commands print the same output and exit with the same codes. The agent holds
 * only its API credential: proofs come from the server ({@code POST /v1/leases/proof}), for the current
 * grant of a holder the credential is bound to.
 *
 * <p>Thread-safe.
 */
public final class RemoteLeases implements LeaseOperations {
    /** {@inheritDoc} The server checks that the agent's credential is bound to the holder a call names. */
    @Override
    public boolean holderAuthenticated() {
        return true;
    }

    private final FenceClient client;

    public RemoteLeases(FenceClient client) {
        this.client = client;
    }

    @Override
    public AcquireOutcome acquire(String resource, String holder, Duration ttl, String grantSha, HeldGrant held) {
        // The server authenticates the holder by the caller's credential, so a grant shown here proves
        // nothing more and is not sent: the proof stays with its holder.
        Map<String, Object> body = Json.object();
        body.put("resource", resource);
        body.put("holder", holder);
        body.put("ttl", Durations.format(ttl));
        if (grantSha != null) {
            body.put("grantSha", grantSha);
        }
        FenceClient.Response r = client.post("/v1/leases/acquire", body);
        JsonNode n = ok(r, "busy");
        if ("busy".equals(Json.text(n, "status"))) {
            return new AcquireOutcome.Busy(
                    Json.text(n, "resource"), Json.text(n, "holder"), Instant.parse(Json.text(n, "expiresAt")));
        }
        return new AcquireOutcome.Acquired(read(() -> Json.readGrant(n)));
    }

    @Override
    public CheckOutcome renew(String resource, String holder, long token, String proof, Duration ttl) {
        Map<String, Object> body = check(resource, holder, token, proof);
        body.put("ttl", Durations.format(ttl));
        return checked(client.post("/v1/leases/renew", body));
    }

    @Override
    public CheckOutcome release(String resource, String holder, long token, String proof) {
        return checked(client.post("/v1/leases/release", check(resource, holder, token, proof)));
    }

    @Override
    public LeaseService.Status status(String resource) {
        FenceClient.Response r = client.get("/v1/leases/status", Map.of("resource", resource));
        JsonNode n = ok(r, null);
        return read(() -> new LeaseService.Status(
                new ResourceState(
                        Json.text(n, "resource"),
                        0,
                        n.path("latestGranted").asLong(),
                        n.path("highestAccepted").asLong(),
                        Json.readLease(n.get("lastLease")),
                        0,
                        null,
                        null,
                        Json.readTip(n.get("lastWrite"))),
                Json.text(n, "generation"),
                Instant.parse(Json.text(n, "at")),
                n.path("floor").asLong(0)));
    }

    /**
     * Null: fence serve authenticated the caller as the holder it names ({@link #holderAuthenticated}), and
     * the hook it serves checks the proof a push carries.
     */
    @Override
    public Fenced checkProof(String resource, String holder, long token, String proof) {
        return null;
    }

    @Override
    public CheckOutcome moveGrantSha(
            String resource, String holder, long token, String proof, String expectedSha, String newSha) {
        Map<String, Object> body = check(resource, holder, token, proof);
        body.put("expectedSha", expectedSha);
        body.put("newSha", newSha);
        return checked(client.post("/v1/leases/move-sha", body));
    }

    @Override
    public List<LedgerEvent> grantsTo(String holder, String resource, Instant since, int limit) {
        Map<String, String> query = new LinkedHashMap<>();
        query.put("holder", holder);
        query.put("resource", resource);
        query.put("since", since == null ? null : since.toString());
        query.put("limit", Integer.toString(limit));
        JsonNode n = ok(client.get("/v1/leases/grants", query), null);
        if (!n.isArray()) {
            throw new InternalException("the fence server's grants answer is not a JSON array");
        }
        List<LedgerEvent> out = new ArrayList<>();
        for (JsonNode e : n) {
            out.add(read(() -> Json.readEvent(e)));
        }
        return out;
    }

    @Override
    public ProofOutcome proof(String resource, String holder, long token) {
        FenceClient.Response r = client.post("/v1/leases/proof", check(resource, holder, token, null));
        JsonNode n = ok(r, "fenced");
        if (r.status() == 409) {
            return new ProofOutcome.Lost(read(() -> Json.readFenced(n)));
        }
        String proof = Json.text(n, "proof");
        if (!Proofs.isWellFormed(proof)) {
            throw new InternalException("the fence server's proof answer has no well-formed proof");
        }
        return new ProofOutcome.Issued(proof, Json.text(n, "generation"));
    }

    @Override
    public void close() {
        // The JDK's HTTP client of Java 17 holds no resources that need closing.
    }

    private static Map<String, Object> check(String resource, String holder, long token, String proof) {
        Map<String, Object> body = Json.object();
        body.put("resource", resource);
        body.put("holder", holder);
        body.put("token", token);
        if (proof != null) {
            body.put("proof", proof);
        }
        return body;
    }

    /** A renew, release or move-sha answer: 200 current, 409 FENCED. */
    private CheckOutcome checked(FenceClient.Response r) {
        JsonNode n = ok(r, "fenced");
        String status = Json.text(n, "status");
        if (r.status() == 409) {
            return new CheckOutcome.Lost(read(() -> Json.readFenced(n)));
        }
        if (!"renewed".equals(status) && !"released".equals(status) && !"moved".equals(status)) {
            throw new InternalException("unexpected answer from the fence server: status " + status);
        }
        return new CheckOutcome.Current(Json.text(n, "resource"), read(() -> Json.readLease(n)));
    }

    /** The JSON of a 200, or of a 409 when {@code conflict} names what a 409 means here. */
    private JsonNode ok(FenceClient.Response r, String conflict) {
        if (r.status() == 200 || (r.status() == 409 && conflict != null)) {
            return r.json();
        }
        throw client.failure(r);
    }

    private static <T> T read(java.util.function.Supplier<T> reader) {
        try {
            return reader.get();
        } catch (IllegalArgumentException | NullPointerException | java.time.format.DateTimeParseException e) {
            throw new InternalException("the fence server's answer has an unexpected shape: " + e.getMessage(), e);
        }
    }
}
