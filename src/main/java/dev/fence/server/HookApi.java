package dev.fence.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.KnownAncestry;
import dev.fence.core.ObjectIds;
import dev.fence.core.StoreUnavailableException;
import dev.fence.hook.CaseAliases;
import dev.fence.hook.HookConfig;
import dev.fence.hook.HookEnvironments;
import dev.fence.hook.PostReceiveHook;
import dev.fence.hook.PreReceiveHook;
import dev.fence.hook.SymrefFacts;
import dev.fence.json.Json;
import dev.fence.server.client.VerdictFormat;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code /v1/hook/pre-receive} and {@code /v1/hook/post-receive}: the hooks, judged by the same function
 * the hook process uses, with the push and host identity taken from the request and ancestry answered by
 * the caller.
 *
 * <p>Only host identity and push options are taken from the request's environment ({@link
 * HookEnvironments#isPushVariable}):
 * the policy is the server's, so a caller cannot relax it by sending {@code FENCE_PUSHER_POLICY} and the
 * like.
 */
final class HookApi {
    /** Most ancestry facts one request may carry. */
    static final int MAX_FACTS = 100_000;

    /** Most environment entries one request may carry (push options are up to 10,000). */
    static final int MAX_ENV = 20_100;

    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");
    private static final int MAX_ENV_VALUE = 65_536;

    private final PreReceiveHook pre;
    private final PostReceiveHook post;
    private final HookConfig config;
    private final String storeUrl;
    private final StoreCalls calls;
    private final ServerMetrics metrics;

    HookApi(
            PreReceiveHook pre,
            PostReceiveHook post,
            HookConfig config,
            String storeUrl,
            StoreCalls calls,
            ServerMetrics metrics) {
        this.pre = pre;
        this.post = post;
        this.config = config;
        this.storeUrl = storeUrl;
        this.calls = calls;
        this.metrics = metrics;
    }

    Reply preReceive(Call call) {
        Push push = read(call);
        KnownAncestry ancestry = KnownAncestry.collecting();
        push.facts().forEach(f -> ancestry.fact(f.ancestor(), f.descendant(), f.isAncestor()));
        PreReceiveHook.Judgement j;
        try {
            j = pre.judge(
                    push.config(config),
                    push.env(),
                    null,
                    push.stdin(),
                    storeUrl,
                    ancestry,
                    new PreReceiveHook.Measured(push.symbolic(), push.cases(), call.waitedNanos()));
        } catch (KnownAncestry.Needed needed) {
            metrics.verdict("pre-receive", "need", "ancestry");
            return need(needed.questions(), call.wantsText(), push.nonce());
        }
        boolean accepted = j.result().exitCode() == 0;
        metrics.verdict("pre-receive", accepted ? "accept" : "reject", j.reason());
        if (call.wantsText()) {
            StringBuilder out = new StringBuilder();
            if (push.nonce() != null) {
                out.append(VerdictFormat.verdictLine(push.nonce(), accepted ? 0 : 1))
                        .append('\n');
            } else {
                out.append(accepted ? "accept\n" : "reject\n");
            }
            VerdictFormat.appendLines(out, j.result().lines());
            return Reply.text(200, out.toString());
        }
        Map<String, Object> m = Json.object();
        versioned(m, push.nonce());
        m.put("verdict", accepted ? "accept" : "reject");
        m.put("exitCode", j.result().exitCode());
        m.put("reason", j.reason());
        m.put("lines", j.result().lines());
        return Reply.json(200, m);
    }

    Reply postReceive(Call call) {
        Push push = read(call);
        List<String> lines;
        try {
            lines = calls.call(
                    "post-receive", () -> post.record(push.config(config), push.env(), null, push.stdin(), storeUrl));
        } catch (StoreUnavailableException e) {
            lines = List.of("warning: fence could not record the landed push: " + e.getMessage());
        }
        metrics.verdict("post-receive", lines.isEmpty() ? "recorded" : "warning", "-");
        if (call.wantsText()) {
            StringBuilder out = new StringBuilder(
                    push.nonce() != null ? VerdictFormat.verdictLine(push.nonce(), 0) + "\n" : "ok\n");
            VerdictFormat.appendLines(out, lines);
            return Reply.text(200, out.toString());
        }
        Map<String, Object> m = Json.object();
        versioned(m, push.nonce());
        m.put("status", lines.isEmpty() ? "recorded" : "warning");
        m.put("lines", lines);
        return Reply.json(200, m);
    }

    /** The version and the caller's nonce, first in a JSON answer, when the caller sent a nonce. */
    private static void versioned(Map<String, Object> m, String nonce) {
        if (nonce != null) {
            m.put("format", VerdictFormat.FORMAT);
            m.put("nonce", nonce);
        }
    }

    private static Reply need(List<KnownAncestry.Question> questions, boolean text, String nonce) {
        if (text) {
            StringBuilder out = new StringBuilder();
            if (nonce != null) {
                out.append(VerdictFormat.needLine(nonce)).append('\n');
            }
            List<String> lines = new ArrayList<>(questions.size());
            for (KnownAncestry.Question q : questions) {
                lines.add("need " + q.ancestor() + ' ' + q.descendant());
            }
            // What does not fit is asked again in the next round, with this round's answers known.
            VerdictFormat.appendWithin(out, lines);
            return Reply.text(200, out.toString());
        }
        List<Map<String, Object>> asked = new ArrayList<>();
        for (KnownAncestry.Question q : questions) {
            Map<String, Object> m = Json.object();
            m.put("ancestor", q.ancestor());
            m.put("descendant", q.descendant());
            asked.add(m);
        }
        Map<String, Object> m = Json.object();
        versioned(m, nonce);
        m.put("verdict", "need");
        m.put("need", asked);
        return Reply.json(200, m);
    }

    /** A fact the caller measured in its repository. */
    record Fact(String ancestor, String descendant, boolean isAncestor) {}

    /**
     * A hook request, read from JSON or a form.
     *
     * @param symbolic the pushed symbolic refs the caller measured ({@link SymrefFacts})
     * @param cases whether the caller's repository ignores case in ref names, and the spellings it has of the
     *     pushed refs ({@link CaseAliases})
     * @param nonce the caller's nonce for a versioned answer ({@link VerdictFormat}), or null
     */
    record Push(
            byte[] stdinBytes,
            Map<String, String> env,
            List<Fact> facts,
            SymrefFacts symbolic,
            CaseAliases cases,
            String nonce) {
        ByteArrayInputStream stdin() {
            return new ByteArrayInputStream(stdinBytes);
        }

        /** The server's configuration, with the plain-git repo id the caller measured (if any). */
        HookConfig config(HookConfig server) {
            String repoId = env.get("FENCE_REPO_ID");
            if (repoId == null || repoId.isEmpty()) {
                return server;
            }
            return server.withRepoId(repoId);
        }
    }

    static Push read(Call call) {
        String type = call.contentType();
        if (type.equals("application/x-www-form-urlencoded")) {
            return readForm(call.form());
        } else if (type.equals("application/json") || type.isEmpty()) {
            return readJson(call.json());
        }
        throw new HttpError(415, "send application/json or application/x-www-form-urlencoded, not " + type);
    }

    private static Push readForm(Form form) {
        for (String name : form.names()) {
            if (!List.of(
                            "stdin",
                            "env",
                            "option",
                            "fact",
                            SymrefFacts.CHAIN,
                            SymrefFacts.PROBLEM,
                            CaseAliases.IGNORECASE,
                            CaseAliases.SPELLING,
                            CaseAliases.NAMESPACE_SPELLING,
                            "nonce")
                    .contains(name)) {
                throw HttpError.badRequest("unknown form field '" + name + "' (known: stdin, env, option, fact, "
                        + SymrefFacts.CHAIN + ", " + SymrefFacts.PROBLEM + ", " + CaseAliases.IGNORECASE + ", "
                        + CaseAliases.SPELLING + ", " + CaseAliases.NAMESPACE_SPELLING + ", nonce)");
            }
        }
        String stdin = form.get("stdin");
        if (stdin == null) {
            throw HttpError.badRequest("'stdin' is required: the hook's standard input (may be empty)");
        }
        Map<String, String> env = new LinkedHashMap<>();
        List<String> vars = form.all("env");
        if (vars.size() > MAX_ENV) {
            throw HttpError.badRequest("more than " + MAX_ENV + " env fields");
        }
        for (String v : vars) {
            int eq = v.indexOf('=');
            if (eq <= 0) {
                throw HttpError.badRequest("env fields are NAME=VALUE; got one without a name or '='");
            }
            putEnv(env, v.substring(0, eq), v.substring(eq + 1));
        }
        addOptions(env, form.all("option"));
        List<Fact> facts = new ArrayList<>();
        List<String> given = form.all("fact");
        if (given.size() > MAX_FACTS) {
            throw HttpError.badRequest("more than " + MAX_FACTS + " facts");
        }
        for (String f : given) {
            String[] parts = f.strip().split(" +");
            if (parts.length != 3) {
                throw HttpError.badRequest("fact fields are '<ancestor> <descendant> yes|no'");
            }
            facts.add(fact(parts[0], parts[1], answer(parts[2])));
        }
        return new Push(
                stdin.getBytes(StandardCharsets.UTF_8),
                env,
                facts,
                symbolic(form.all(SymrefFacts.CHAIN), form.all(SymrefFacts.PROBLEM)),
                cases(
                        form.get(CaseAliases.IGNORECASE),
                        form.all(CaseAliases.SPELLING),
                        form.all(CaseAliases.NAMESPACE_SPELLING)),
                nonce(form.get("nonce")));
    }

    private static Push readJson(JsonNode body) {
        JsonNode stdin = body.get("stdin");
        if (stdin == null || !stdin.isTextual()) {
            throw HttpError.badRequest(
                    "'stdin' is required: a string holding the hook's standard input (may be empty)");
        }
        Map<String, String> env = new LinkedHashMap<>();
        JsonNode e = body.get("env");
        if (e != null && !e.isNull()) {
            if (!e.isObject()) {
                throw HttpError.badRequest("'env' must be an object of NAME: \"value\"");
            }
            if (e.size() > MAX_ENV) {
                throw HttpError.badRequest("more than " + MAX_ENV + " env entries");
            }
            var fields = e.fields();
            while (fields.hasNext()) {
                var f = fields.next();
                if (!f.getValue().isTextual()) {
                    throw HttpError.badRequest("env value of " + f.getKey() + " must be a string");
                }
                putEnv(env, f.getKey(), f.getValue().asText());
            }
        }
        JsonNode options = body.get("pushOptions");
        if (options != null && !options.isNull()) {
            if (!options.isArray()) {
                throw HttpError.badRequest("'pushOptions' must be an array of strings");
            }
            List<String> list = new ArrayList<>();
            for (JsonNode o : options) {
                if (!o.isTextual()) {
                    throw HttpError.badRequest("'pushOptions' must be an array of strings");
                }
                list.add(o.asText());
            }
            addOptions(env, list);
        }
        List<Fact> facts = new ArrayList<>();
        JsonNode a = body.get("ancestry");
        if (a != null && !a.isNull()) {
            if (!a.isArray()) {
                throw HttpError.badRequest("'ancestry' must be an array of {ancestor, descendant, isAncestor}");
            }
            if (a.size() > MAX_FACTS) {
                throw HttpError.badRequest("more than " + MAX_FACTS + " ancestry facts");
            }
            for (JsonNode f : a) {
                JsonNode is = f.get("isAncestor");
                if (!f.isObject() || is == null || !is.isBoolean()) {
                    throw HttpError.badRequest(
                            "each ancestry fact is {\"ancestor\": id, \"descendant\": id, \"isAncestor\": true|false}");
                }
                facts.add(
                        fact(f.path("ancestor").asText(""), f.path("descendant").asText(""), is.asBoolean()));
            }
        }
        for (var it = body.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!List.of(
                            "stdin",
                            "env",
                            "pushOptions",
                            "ancestry",
                            "symrefs",
                            "symrefProblems",
                            CaseAliases.IGNORECASE,
                            CaseAliases.SPELLING + "s",
                            CaseAliases.NAMESPACE_SPELLING + "s",
                            "nonce")
                    .contains(name)) {
                throw HttpError.badRequest("unknown field '" + name
                        + "' (known: stdin, env, pushOptions, ancestry, symrefs, symrefProblems, "
                        + CaseAliases.IGNORECASE + ", " + CaseAliases.SPELLING + "s, "
                        + CaseAliases.NAMESPACE_SPELLING + "s, nonce)");
            }
        }
        JsonNode nonce = body.get("nonce");
        if (nonce != null && !nonce.isNull() && !nonce.isTextual()) {
            throw HttpError.badRequest("'nonce' must be a string");
        }
        return new Push(
                stdin.asText().getBytes(StandardCharsets.UTF_8),
                env,
                facts,
                symbolic(strings(body, "symrefs"), strings(body, "symrefProblems")),
                cases(
                        ignorecase(body),
                        strings(body, CaseAliases.SPELLING + "s"),
                        strings(body, CaseAliases.NAMESPACE_SPELLING + "s")),
                nonce == null || nonce.isNull() ? null : nonce(nonce.asText()));
    }

    /** The caller's symbolic-ref facts; a fact that names no ref is a request refused. */
    private static SymrefFacts symbolic(List<String> chains, List<String> problems) {
        if (chains.size() + problems.size() > MAX_FACTS) {
            throw HttpError.badRequest("more than " + MAX_FACTS + " symbolic-ref facts");
        }
        try {
            return SymrefFacts.parse(chains, problems);
        } catch (IllegalArgumentException e) {
            throw HttpError.badRequest(e.getMessage());
        }
    }

    /**
     * The caller's spellings of the pushed refs and of its namespace; a fact that is not two names, or not a
     * namespace, is a request refused. No namespace fact (a caller older than it) refuses no namespace.
     */
    private static CaseAliases cases(String ignorecase, List<String> spellings, List<String> namespaces) {
        if (spellings.size() > MAX_FACTS) {
            throw HttpError.badRequest("more than " + MAX_FACTS + " " + CaseAliases.SPELLING + " facts");
        }
        if (namespaces.size() > MAX_FACTS) {
            throw HttpError.badRequest("more than " + MAX_FACTS + " " + CaseAliases.NAMESPACE_SPELLING + " facts");
        }
        try {
            return CaseAliases.parse(ignorecase, spellings, namespaces);
        } catch (IllegalArgumentException e) {
            throw HttpError.badRequest(e.getMessage());
        }
    }

    /** JSON {@value CaseAliases#IGNORECASE}: a boolean, or a string as the form field has it; null when absent. */
    private static String ignorecase(JsonNode body) {
        JsonNode v = body.get(CaseAliases.IGNORECASE);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isBoolean()) {
            return v.asBoolean() ? CaseAliases.FULL : "false";
        }
        if (!v.isTextual()) {
            throw HttpError.badRequest(
                    "'" + CaseAliases.IGNORECASE + "' must be true, false or \"" + CaseAliases.ASCII + "\"");
        }
        return v.asText();
    }

    /** JSON array {@code name} of strings; empty when absent. */
    private static List<String> strings(JsonNode body, String name) {
        JsonNode a = body.get(name);
        List<String> out = new ArrayList<>();
        if (a == null || a.isNull()) {
            return out;
        }
        if (!a.isArray()) {
            throw HttpError.badRequest("'" + name + "' must be an array of strings");
        }
        for (JsonNode s : a) {
            if (!s.isTextual()) {
                throw HttpError.badRequest("'" + name + "' must be an array of strings");
            }
            out.add(s.asText());
        }
        return out;
    }

    /** A nonce as given, checked; null when none was given. */
    private static String nonce(String given) {
        if (given == null) {
            return null;
        }
        if (!VerdictFormat.NONCE.matcher(given).matches()) {
            throw HttpError.badRequest("'nonce' must be 16 to 128 letters, digits, '-' or '_'");
        }
        return given;
    }

    private static void putEnv(Map<String, String> env, String name, String value) {
        if (!ENV_NAME.matcher(name).matches()) {
            throw HttpError.badRequest("env name '" + (name.length() > 40 ? name.substring(0, 40) + "…" : name)
                    + "' is not a variable name");
        }
        if (value.length() > MAX_ENV_VALUE) {
            throw HttpError.badRequest("env value of " + name + " is longer than " + MAX_ENV_VALUE + " characters");
        }
        if (HookEnvironments.isPushVariable(name)) {
            env.put(name, value);
        }
    }

    private static void addOptions(Map<String, String> env, List<String> options) {
        if (options.isEmpty()) {
            return;
        }
        if (env.containsKey("GIT_PUSH_OPTION_COUNT")) {
            throw HttpError.badRequest(
                    "give push options either as GIT_PUSH_OPTION_* variables or as a list, not both");
        }
        env.put("GIT_PUSH_OPTION_COUNT", Integer.toString(options.size()));
        for (int i = 0; i < options.size(); i++) {
            env.put("GIT_PUSH_OPTION_" + i, options.get(i));
        }
    }

    private static Fact fact(String ancestor, String descendant, boolean isAncestor) {
        if (!ObjectIds.isValid(ancestor) || !ObjectIds.isValid(descendant)) {
            throw HttpError.badRequest("an ancestry fact names something that is not a full object id");
        }
        return new Fact(ancestor, descendant, isAncestor);
    }

    private static boolean answer(String word) {
        return switch (word) {
            case "yes", "true", "1" -> true;
            case "no", "false", "0" -> false;
            default -> throw HttpError.badRequest("a fact's answer is yes or no, not '" + word + "'");
        };
    }
}
