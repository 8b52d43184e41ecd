package dev.fence.server.client;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.Ancestry;
import dev.fence.core.HostKind;
import dev.fence.core.InvalidInputException;
import dev.fence.core.StoreUnavailableException;
import dev.fence.hook.GitAncestry;
import dev.fence.hook.HookConfig;
import dev.fence.hook.HookEnvironment;
import dev.fence.hook.HookEnvironments;
import dev.fence.hook.PreReceiveHook;
import dev.fence.hook.SymbolicRefs;
import dev.fence.json.Json;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The pre- and post-receive hooks in server mode: send the push to {@code fence serve}, answer its
 * ancestry questions with {@code git merge-base --is-ancestor} in this repository, and print what it
 * says. When the server cannot be reached or fails, the verdict is the one a hook gives when its store is
 * down (tokens fail closed, tokenless pushes follow {@code on-store-down}); when it refuses the hook's
 * credential, every fenced push is refused.
 */
public final class RemoteHooks {
    /** Rounds of ancestry questions before giving up (one is the norm; a second only after a race). */
    public static final int MAX_ROUNDS = 4;

    private final FenceClient client;
    private final Clock clock;

    public RemoteHooks(FenceClient client, Clock clock) {
        this.client = client;
        this.clock = clock;
    }

    /**
     * Judges one push through the server.
     *
     * @param config the local configuration (for the repo id and for the store-down verdict)
     */
    public PreReceiveHook.Result preReceive(
            Map<String, String> env, Path gitDir, InputStream stdin, HookConfig config) {
        byte[] input = readAll(stdin);
        // The server cannot see this repository's symbolic refs: they are refused here.
        PreReceiveHook.Result symbolic = SymbolicRefs.refusedForServer(env, gitDir, config.git(), input);
        if (symbolic != null) {
            return symbolic;
        }
        Map<String, Object> body = body(env, gitDir, config, input);
        Ancestry git = new GitAncestry(env, gitDir, config.git());
        List<Map<String, Object>> facts = new ArrayList<>();
        body.put("ancestry", facts);
        for (int round = 0; round < MAX_ROUNDS; round++) {
            FenceClient.Response r;
            try {
                r = client.post("/v1/hook/pre-receive", body);
            } catch (StoreUnavailableException e) {
                return unavailable(env, gitDir, input, config, e.getMessage(), false);
            }
            if (r.status() == 401 || r.status() == 403) {
                return unavailable(
                        env,
                        gitDir,
                        input,
                        config,
                        "the fence server refused the hook's credential (" + r.message() + ")",
                        true);
            }
            if (r.status() != 200) {
                return unavailable(
                        env,
                        gitDir,
                        input,
                        config,
                        "the fence server answered HTTP " + r.status() + " (" + r.message() + ")",
                        r.status() < 500);
            }
            JsonNode n = r.json();
            String verdict = Json.text(n, "verdict");
            if (!"need".equals(verdict)) {
                List<String> lines = new ArrayList<>();
                n.path("lines").forEach(l -> lines.add(l.asText()));
                return new PreReceiveHook.Result(n.path("exitCode").asInt(1), lines);
            }
            for (JsonNode q : n.path("need")) {
                String a = Json.text(q, "ancestor");
                String d = Json.text(q, "descendant");
                Map<String, Object> fact = Json.object();
                fact.put("ancestor", a);
                fact.put("descendant", d);
                fact.put("isAncestor", git.isAncestor(a, d));
                facts.add(fact);
            }
        }
        return unavailable(
                env,
                gitDir,
                input,
                config,
                "the fence server still needed ancestry after " + MAX_ROUNDS + " rounds",
                true);
    }

    /** Records landed updates through the server; returns warning lines (never fails the push). */
    public List<String> postReceive(Map<String, String> env, Path gitDir, InputStream stdin, HookConfig config) {
        try {
            FenceClient.Response r = client.post("/v1/hook/post-receive", body(env, gitDir, config, readAll(stdin)));
            if (r.status() != 200) {
                return List.of("warning: fence could not record the landed push: " + r.message());
            }
            List<String> lines = new ArrayList<>();
            r.json().path("lines").forEach(l -> lines.add(l.asText()));
            return lines;
        } catch (RuntimeException e) {
            return List.of("warning: fence could not record the landed push: " + e.getMessage());
        }
    }

    private PreReceiveHook.Result unavailable(
            Map<String, String> env, Path gitDir, byte[] input, HookConfig config, String problem, boolean failClosed) {
        PreReceiveHook local = new PreReceiveHook(
                url -> {
                    throw new StoreUnavailableException("server mode: no store here");
                },
                clock);
        return local.unavailable(config, env, gitDir, new ByteArrayInputStream(input), problem, failClosed);
    }

    /** The request: stdin, the push variables, and for plain git the repo id measured here. */
    private static Map<String, Object> body(Map<String, String> env, Path gitDir, HookConfig config, byte[] input) {
        Map<String, String> sent = new TreeMap<>();
        env.forEach((k, v) -> {
            // FENCE_REPO_ID is what this hook measured, never the environment's: on a local-path remote
            // that is the pusher's, and a repo id of its choosing would rename every resource.
            if (HookEnvironments.isPushVariable(k) && !k.equals("FENCE_REPO_ID")) {
                sent.put(k, v);
            }
        });
        try {
            HookEnvironment where =
                    HookEnvironments.detect(env, gitDir, config.repoId().orElse(null));
            if (where.host() == HostKind.PLAIN) {
                sent.put("FENCE_REPO_ID", where.repoId());
            }
        } catch (InvalidInputException e) {
            // The server finds the same problem and words the refusal.
        }
        Map<String, Object> body = Json.object();
        body.put("stdin", new String(input, StandardCharsets.UTF_8));
        body.put("env", sent);
        return body;
    }

    private static byte[] readAll(InputStream in) {
        try {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
