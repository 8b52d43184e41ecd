package dev.fence.mcp;

import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.json.Json;
import java.util.List;
import java.util.Map;

/**
 * What one tool call answers, before it is put on the wire: the text the model reads, the structured
 * content a harness reads, and whether it is an error. Never carries a proof or a lease's expected SHA.
 *
 * <p>Every error's structured content has {@code fenced}: {@code true} for FENCED (with {@code reason,
 * resource, ref, token, current, holder, reread}), {@code false} for everything else, which then names
 * an {@code error} kind: {@code busy}, {@code store-down}, {@code invalid} (with the {@code argument}),
 * {@code rejected}, {@code config} or {@code internal}.
 *
 * @param error true for an error result ({@code isError})
 * @param text the content, for the model
 * @param structured the structured content
 */
public record ToolResult(boolean error, String text, Map<String, Object> structured) {
    public ToolResult {
        structured = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(structured));
    }

    /** A successful result. */
    static ToolResult ok(List<String> lines, Map<String, Object> structured) {
        return new ToolResult(false, String.join("\n", lines), structured);
    }

    /** FENCED, from the store's verdict: design §5's message naming {@code reread} as the way to re-read. */
    static ToolResult fenced(Fenced f, String reread) {
        return fenced(
                FencedMessage.lines(f, reread),
                FencedMessage.isFencing(f.reason()),
                f.resource(),
                f.ref(),
                f.token(),
                f.current(),
                f.reason().code(),
                f.currentHolder(),
                reread);
    }

    /**
     * FENCED from a message that arrived as text (a remote's hook, through git): its machine line gives the
     * fields; the text is passed on unchanged, as it was written for the model.
     */
    static ToolResult fencedLines(List<String> lines, String resource, String ref, long token, String reread) {
        FencedMessage.MachineLine m = lines.isEmpty()
                ? null
                : FencedMessage.parseMachineLine(lines.get(0)).orElse(null);
        return fenced(
                lines,
                m == null || m.fencing(),
                m != null && m.resource() != null ? m.resource() : resource,
                m != null && m.ref() != null ? m.ref() : ref,
                m != null && m.token() > 0 ? m.token() : token,
                m != null ? m.current() : 0,
                m != null && m.reason() != null ? m.reason() : "fenced",
                null,
                reread);
    }

    private static ToolResult fenced(
            List<String> lines,
            boolean fencing,
            String resource,
            String ref,
            long token,
            long current,
            String reason,
            String holder,
            String reread) {
        Map<String, Object> m = Json.object();
        m.put("fenced", fencing);
        if (!fencing) {
            m.put("error", "rejected");
        }
        m.put("reason", reason);
        m.put("resource", resource);
        m.put("ref", ref);
        m.put("token", token);
        m.put("current", current);
        m.put("holder", holder);
        m.put("reread", reread);
        m.put("message", lines);
        return new ToolResult(true, String.join("\n", lines), m);
    }

    /**
     * An error that is not FENCED.
     *
     * @param kind {@code busy}, {@code store-down}, {@code invalid}, {@code rejected}, {@code config} or
     *     {@code internal}
     * @param extra more structured fields, in order
     */
    static ToolResult failure(String kind, String text, Map<String, Object> extra) {
        Map<String, Object> m = Json.object();
        m.put("fenced", false);
        m.put("error", kind);
        m.putAll(extra);
        m.put("message", text);
        return new ToolResult(true, text, m);
    }

    /** Bad input: names the argument (null when the input as a whole is wrong). */
    static ToolResult invalid(String argument, String text) {
        Map<String, Object> m = Json.object();
        m.put("argument", argument);
        return failure("invalid", text, m);
    }
}
