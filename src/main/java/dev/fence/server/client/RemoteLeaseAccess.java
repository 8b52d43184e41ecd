package dev.fence.server.client;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.client.LeaseAccess;
import dev.fence.core.InternalException;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.core.LeaseService.CheckOutcome;
import dev.fence.core.LeaseService.Status;
import dev.fence.core.LedgerEvent;
import dev.fence.core.Proofs;
import dev.fence.json.Json;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Leases through {@code fence serve} ("server mode", {@code --server URL}): what {@code fence push},
 * {@code exec}, {@code status} and the pre-push guard need, with the same outcomes as {@link
 * dev.fence.client.DirectLeaseAccess}, so the commands print the same output and exit with the same
 * codes. The agent holds only its API credential: proofs come from the server ({@code POST
 * /v1/leases/proof}), for the current grant of a holder the credential is bound to.
 *
 * <p>Thread-safe.
 */
public final class RemoteLeaseAccess implements LeaseAccess {
    private final FenceClient client;
    private final RemoteLeases leases;

    public RemoteLeaseAccess(FenceClient client) {
        this.client = client;
        this.leases = new RemoteLeases(client);
    }

    @Override
    public AcquireOutcome acquire(String resource, String holder, Duration ttl, String grantSha) {
        return leases.acquire(resource, holder, ttl, grantSha);
    }

    @Override
    public CheckOutcome renew(String resource, String holder, long token, String proof, Duration ttl) {
        return leases.renew(resource, holder, token, proof, ttl);
    }

    @Override
    public CheckOutcome moveGrantSha(String resource, String holder, long token, String expectedSha, String newSha) {
        Map<String, Object> body = Json.object();
        body.put("resource", resource);
        body.put("holder", holder);
        body.put("token", token);
        body.put("expectedSha", expectedSha);
        body.put("newSha", newSha);
        return leases.checked(client.post("/v1/leases/move-sha", body));
    }

    @Override
    public Status status(String resource) {
        return leases.status(resource);
    }

    @Override
    public List<LedgerEvent> grantsTo(String holder, String resource, Instant since, int limit) {
        Map<String, String> query = new LinkedHashMap<>();
        query.put("holder", holder);
        query.put("resource", resource);
        query.put("since", since == null ? null : since.toString());
        query.put("limit", Integer.toString(limit));
        FenceClient.Response r = client.get("/v1/leases/grants", query);
        JsonNode n = leases.ok(r, null);
        if (!n.isArray()) {
            throw new InternalException("the fence server's grants answer is not a JSON array");
        }
        List<LedgerEvent> out = new ArrayList<>();
        for (JsonNode e : n) {
            out.add(RemoteLeases.read(() -> Json.readEvent(e)));
        }
        return out;
    }

    @Override
    public ProofOutcome proof(String resource, String holder, long token) {
        Map<String, Object> body = Json.object();
        body.put("resource", resource);
        body.put("holder", holder);
        body.put("token", token);
        FenceClient.Response r = client.post("/v1/leases/proof", body);
        JsonNode n = leases.ok(r, "fenced");
        if (r.status() == 409) {
            return new ProofOutcome.Lost(RemoteLeases.read(() -> Json.readFenced(n)));
        }
        String proof = Json.text(n, "proof");
        if (!Proofs.isWellFormed(proof)) {
            throw new InternalException("the fence server's proof answer has no well-formed proof");
        }
        return new ProofOutcome.Issued(proof);
    }

    @Override
    public void close() {
        // The JDK's HTTP client of Java 17 holds no resources that need closing.
    }
}
