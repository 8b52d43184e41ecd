package dev.fence.server.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.Ancestry;
import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.core.HostKind;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Reason;
import dev.fence.core.RefUpdate;
import dev.fence.core.StoreUnavailableException;
import dev.fence.hook.CaseAliases;
import dev.fence.hook.GitAncestry;
import dev.fence.hook.HookConfig;
import dev.fence.hook.HookEnvironment;
import dev.fence.hook.HookEnvironments;
import dev.fence.hook.HookInputParser;
import dev.fence.hook.PreReceiveHook;
import dev.fence.hook.SymbolicRefs;
import dev.fence.hook.SymrefFacts;
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
import java.util.concurrent.ThreadLocalRandom;

/**
 * The pre- and post-receive hooks in server mode: send the push to {@code fence serve}, answer its
 * ancestry questions with {@code git merge-base --is-ancestor} in this repository, and print what it
 * says. When the server cannot be reached or fails, the verdict is the one a hook gives when its store is
 * down (tokens fail closed, tokenless pushes follow {@code on-store-down}); when it refuses the hook's
 * credential, every fenced push is refused. Only fence serve's versioned answer to this request ({@link
 * VerdictFormat}: its format and this request's nonce) counts as a verdict: any other answer with status
 * 200 refuses the push ({@code reason=bad-server-reply}).
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
        Map<String, Object> body = body(env, gitDir, config, input);
        // The server cannot see this repository's symbolic refs, nor whether its file system ignores case:
        // it judges them from these facts.
        List<String> symbolic = List.of();
        if (gitDir != null) {
            List<RefUpdate> updates;
            try {
                updates = new HookInputParser().parse(new ByteArrayInputStream(input));
            } catch (RuntimeException e) {
                updates = List.of(); // the server words the problem
            }
            CaseAliases cases = CaseAliases.measure(env, gitDir, updates);
            if (cases.ignoresCase()) {
                body.put(CaseAliases.IGNORECASE, cases.folding());
                body.put(CaseAliases.SPELLING + "s", cases.facts());
                if (!cases.namespaceFacts().isEmpty()) {
                    // Only when there is one: a server older than the fact refuses fields it does not know.
                    body.put(CaseAliases.NAMESPACE_SPELLING + "s", cases.namespaceFacts());
                }
            }
            SymbolicRefs refs = SymbolicRefs.of(env, gitDir, config.git());
            symbolic = refs.symbolic(updates);
            if (!symbolic.isEmpty()) {
                Map<String, List<String>> facts = SymrefFacts.measure(refs, updates);
                body.put("symrefs", facts.get(SymrefFacts.CHAIN));
                body.put("symrefProblems", facts.get(SymrefFacts.PROBLEM));
            }
        }
        Ancestry git = new GitAncestry(env, gitDir, config.git());
        List<Map<String, Object>> facts = new ArrayList<>();
        body.put("ancestry", facts);
        for (int round = 0; round < MAX_ROUNDS; round++) {
            String nonce = nonce();
            body.put("nonce", nonce);
            FenceClient.Response r;
            try {
                r = client.post("/v1/hook/pre-receive", body);
            } catch (StoreUnavailableException e) {
                return unavailable(env, gitDir, input, config, e.getMessage(), symbolic);
            }
            if (r.status() == 401 || r.status() == 403) {
                return misconfigured(
                        env,
                        gitDir,
                        input,
                        config,
                        "the fence server refused this hook's credential (HTTP " + r.status() + ": " + r.message()
                                + ")",
                        symbolic);
            }
            if (r.status() >= 500 || r.status() == 408) {
                return unavailable(env, gitDir, input, config, "HTTP " + r.status() + ": " + r.message(), symbolic);
            }
            if (r.status() != 200) {
                // fence serve's own error answer is a request it refused; anything else came from something
                // that is not fence serve.
                return fenceError(r)
                        ? misconfigured(
                                env,
                                gitDir,
                                input,
                                config,
                                "the fence server answered HTTP " + r.status() + ": " + r.message(),
                                symbolic)
                        : badReply(env, gitDir, config, "HTTP " + r.status() + ", not from fence serve");
            }
            JsonNode n = verdict(r, nonce);
            String problem = n == null ? "it is not fence serve's versioned JSON for this request" : problem(n);
            if (problem != null) {
                return badReply(env, gitDir, config, problem);
            }
            String verdict = Json.text(n, "verdict");
            if (!"need".equals(verdict)) {
                List<String> lines = new ArrayList<>();
                n.path("lines").forEach(l -> lines.add(l.asText()));
                return new PreReceiveHook.Result(n.path("exitCode").asInt(), lines);
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
                symbolic);
    }

    /** Records landed updates through the server; returns warning lines (never fails the push). */
    public List<String> postReceive(Map<String, String> env, Path gitDir, InputStream stdin, HookConfig config) {
        try {
            Map<String, Object> body = body(env, gitDir, config, readAll(stdin));
            String nonce = nonce();
            body.put("nonce", nonce);
            FenceClient.Response r = client.post("/v1/hook/post-receive", body);
            if (r.status() != 200) {
                return List.of("warning: fence could not record the landed push: " + r.message());
            }
            JsonNode n = verdict(r, nonce);
            if (n == null) {
                return List.of("warning: fence could not record the landed push: the reply from " + client.base()
                        + " is not a fence verdict");
            }
            List<String> lines = new ArrayList<>();
            n.path("lines").forEach(l -> lines.add(l.asText()));
            return lines;
        } catch (RuntimeException e) {
            return List.of("warning: fence could not record the landed push: " + e.getMessage());
        }
    }

    /**
     * The answer as JSON when it is fence serve's versioned answer to the request that carried {@code
     * nonce}; else null. Only its shape is checked here ({@link #problem} checks the verdict).
     */
    private static JsonNode verdict(FenceClient.Response r, String nonce) {
        JsonNode n;
        try {
            n = Json.read(r.body());
        } catch (JsonProcessingException e) {
            return null;
        }
        if (n == null
                || !n.isObject()
                || !VerdictFormat.FORMAT.equals(Json.text(n, "format"))
                || !nonce.equals(Json.text(n, "nonce"))) {
            return null;
        }
        return n;
    }

    /** Null when {@code n} is a well-formed pre-receive verdict; else what is wrong with it. */
    private static String problem(JsonNode n) {
        String verdict = Json.text(n, "verdict");
        JsonNode exit = n.get("exitCode");
        if ("need".equals(verdict)) {
            return n.path("need").isArray() ? null : "it asks for ancestry without naming any";
        }
        if (!n.path("lines").isArray() || exit == null || !exit.isInt()) {
            return "its verdict has no exit code or lines";
        }
        boolean consistent =
                ("accept".equals(verdict) && exit.asInt() == 0) || ("reject".equals(verdict) && exit.asInt() == 1);
        return consistent ? null : "its verdict '" + verdict + "' and exit code " + exit.asInt() + " disagree";
    }

    /**
     * The refusal for an answer that is not a verdict: never an acceptance, whatever {@code on-store-down}
     * says, since a proxy or another service answering 200 is no sign that fence was asked.
     */
    private PreReceiveHook.Result badReply(Map<String, String> env, Path gitDir, HookConfig config, String problem) {
        String prefix = "";
        try {
            prefix = HookEnvironments.detect(env, gitDir, config).linePrefix();
        } catch (InvalidInputException e) {
            // no host prefix then
        }
        Fenced f = new Fenced("-", null, 0, 0, Reason.BAD_SERVER_REPLY, null, null, null);
        return new PreReceiveHook.Result(
                1,
                List.of(
                        prefix + FencedMessage.machineLine(f),
                        prefix + "fence: the reply from " + client.base() + " is not a fence verdict (" + problem
                                + "), so the push is refused. The server setting must point at fence serve itself"
                                + " (not a proxy, a login page or another service), of a version that answers "
                                + VerdictFormat.FORMAT + ". This is an infrastructure problem, not a conflict:"
                                + " report it to the operator."));
    }

    /**
     * A fresh nonce. It is no secret (it travels in the request) and only has to be one that nothing but
     * a server answering this very request can carry back, so it does not need SecureRandom, whose set-up
     * costs a hook process tens of milliseconds.
     */
    private static String nonce() {
        byte[] b = new byte[16];
        ThreadLocalRandom.current().nextBytes(b);
        StringBuilder out = new StringBuilder(32);
        for (byte x : b) {
            out.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return out.toString();
    }

    /**
     * The verdict when the server cannot be asked (unreachable, past its budget, failing): the hook's
     * store-down verdict ({@link dev.fence.core.Admission#storeDown}) under its policy failing closed, so
     * every fenced ref is refused, whatever {@code on-store-down} says (a push no server judged can be
     * neither recorded nor checked), and refs outside the fenced patterns pass. The curl shim follows the
     * same rule from the patterns {@code fence install} writes into its configuration. A push to a
     * symbolic ref is refused too ({@link SymbolicRefs#unjudgedLines}): only the server decides where it
     * leads.
     */
    private PreReceiveHook.Result unavailable(
            Map<String, String> env,
            Path gitDir,
            byte[] input,
            HookConfig config,
            String problem,
            List<String> symbolic) {
        PreReceiveHook local = new PreReceiveHook(
                url -> {
                    throw new StoreUnavailableException("server mode: no store here");
                },
                clock);
        PreReceiveHook.Result r = local.unavailable(
                config,
                env,
                gitDir,
                new ByteArrayInputStream(input),
                "the fence server is unavailable: " + problem,
                true);
        return closedToSymbolic(r, env, gitDir, config, symbolic);
    }

    /**
     * The hook's bad-configuration verdict ({@link PreReceiveHook#misconfigured}) under its own patterns,
     * with every push to a symbolic ref refused.
     */
    private static PreReceiveHook.Result misconfigured(
            Map<String, String> env,
            Path gitDir,
            byte[] input,
            HookConfig config,
            String problem,
            List<String> symbolic) {
        PreReceiveHook.Result r =
                PreReceiveHook.misconfigured(env, gitDir, new ByteArrayInputStream(input), problem, config.policy());
        return closedToSymbolic(r, env, gitDir, config, symbolic);
    }

    /** {@code r}, or when the push updates symbolic refs no server judged, its refusal. */
    private static PreReceiveHook.Result closedToSymbolic(
            PreReceiveHook.Result r, Map<String, String> env, Path gitDir, HookConfig config, List<String> symbolic) {
        if (symbolic.isEmpty()) {
            return r;
        }
        String prefix = "";
        try {
            prefix = HookEnvironments.detect(env, gitDir, config).linePrefix();
        } catch (InvalidInputException e) {
            // no host prefix then
        }
        return new PreReceiveHook.Result(
                1, SymbolicRefs.unjudgedLines(prefix, symbolic, r.exitCode() != 0 ? r.lines() : List.of()));
    }

    /** True when the body is fence serve's own error answer ({@code {"status": "error", …}}). */
    private static boolean fenceError(FenceClient.Response r) {
        try {
            JsonNode n = Json.read(r.body());
            return n != null && n.isObject() && "error".equals(Json.text(n, "status"));
        } catch (JsonProcessingException e) {
            return false;
        }
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
            // Without the namespace: the server adds GIT_NAMESPACE's (sent above) itself.
            HookEnvironment where = HookEnvironments.detectRepository(env, gitDir, config);
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
