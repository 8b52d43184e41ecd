package dev.fence.server.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.fence.core.EventType;
import dev.fence.core.InternalException;
import dev.fence.core.LedgerAnswer;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Ledger queries through {@code fence serve}: the same events a direct query returns. */
public final class RemoteAudit {
    /**
     * The response header of a {@code /v1/audit} answer that left events out: {@code true} when more
     * events matched than its {@code limit}, so that only the newest {@code limit} came. The body keeps its
     * shape (JSON lines, or a bare JSON array), which has no room to say so.
     */
    public static final String TRUNCATED_HEADER = "Fence-Truncated";

    /** The most events one answer of {@code fence serve} carries: a larger {@code limit} is refused. */
    public static final int MAX_ANSWER_EVENTS = 100_000;

    private final FenceClient client;

    public RemoteAudit(FenceClient client) {
        this.client = client;
    }

    /** The events matching {@code q}, oldest first. Relative times must already be absolute in {@code q}. */
    public List<LedgerEvent> query(LedgerQuery q) {
        return answer(q).events();
    }

    /**
     * The events matching {@code q}, oldest first, and whether more matched than {@code q}'s limit. The
     * server is asked for one event more than the limit (unless that would pass {@value #MAX_ANSWER_EVENTS}),
     * so that the answer tells even from a server that does not send {@value #TRUNCATED_HEADER}.
     */
    public LedgerAnswer answer(LedgerQuery q) {
        LedgerQuery asked = q.limit() < MAX_ANSWER_EVENTS ? LedgerAnswer.probe(q) : q;
        FenceClient.Response r = fetch(asked);
        LedgerAnswer read = LedgerAnswer.of(q, events(r));
        boolean cut = "true".equalsIgnoreCase(r.header(TRUNCATED_HEADER));
        return cut && !read.truncated() ? new LedgerAnswer(read.events(), true) : read;
    }

    private FenceClient.Response fetch(LedgerQuery q) {
        Map<String, String> params = new LinkedHashMap<>();
        params.put("resource", q.resource());
        params.put("repo", q.repo());
        params.put("ref", q.ref());
        params.put("holder", q.holder());
        params.put("since", q.since() == null ? null : q.since().toString());
        // A server before this parameter ignores it; callers that bound a window filter what comes back too.
        params.put("until", q.until() == null ? null : q.until().toString());
        if (q.types() != null && !q.types().isEmpty()) {
            params.put("type", q.types().stream().map(EventType::label).collect(Collectors.joining(",")));
        }
        params.put("limit", Integer.toString(q.limit()));
        FenceClient.Response r = client.get("/v1/audit", params, "application/x-ndjson");
        if (r.status() != 200) {
            throw client.failure(r);
        }
        return r;
    }

    private static List<LedgerEvent> events(FenceClient.Response r) {
        List<LedgerEvent> out = new ArrayList<>();
        for (String line : r.body().split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            try {
                out.add(Json.readEvent(Json.read(line)));
            } catch (JsonProcessingException | IllegalArgumentException e) {
                throw new InternalException("the fence server sent a malformed ledger line", e);
            }
        }
        return out;
    }
}
