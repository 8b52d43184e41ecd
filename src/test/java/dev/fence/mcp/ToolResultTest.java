package dev.fence.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Fenced;
import dev.fence.core.FencedMessage;
import dev.fence.core.Reason;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How outcomes become tool results, and the rule the server serves as a prompt. */
class ToolResultTest {
    @Test
    void aHooksFencedMessageKeepsItsTextAndGivesItsFieldsToTheStructuredContent() {
        Fenced f = new Fenced(
                "git:app:refs/heads/main", "refs/heads/main", 7, 9, Reason.STALE_TOKEN, "agent-b", null, null);
        List<String> lines = FencedMessage.lines(f);
        ToolResult r = ToolResult.fencedLines(lines, "git:app:refs/heads/main", "refs/heads/main", 7, "read_state {}");
        assertTrue(r.error());
        assertEquals(String.join("\n", lines), r.text());
        assertEquals(true, r.structured().get("fenced"));
        assertEquals("stale-token", r.structured().get("reason"));
        assertEquals(7L, r.structured().get("token"));
        assertEquals(9L, r.structured().get("current"));
        assertEquals("read_state {}", r.structured().get("reread"));
    }

    @Test
    void aRejectedLineIsNotFenced() {
        ToolResult r = ToolResult.fencedLines(
                List.of("REJECTED resource=x ref=- token=0 current=3 reason=store-down", "The store is down."),
                "x",
                null,
                0,
                "read_state {}");
        assertEquals(false, r.structured().get("fenced"));
        assertEquals("rejected", r.structured().get("error"));
        assertEquals("store-down", r.structured().get("reason"));
        assertEquals(null, r.structured().get("ref"));
    }

    @Test
    void aStoreVerdictNamesTheToolThatRereads() {
        Fenced f = new Fenced("db/migrations", null, 4, 5, Reason.SUPERSEDED, "agent-b", null, null);
        ToolResult r = ToolResult.fenced(f, "read_state {\"resource\": \"db/migrations\"}");
        assertTrue(r.text().startsWith("FENCED resource=db/migrations ref=- token=4 current=5 reason=superseded"));
        assertTrue(r.text().contains("re-read the resource (read_state {\"resource\": \"db/migrations\"})"), r.text());
        assertEquals("agent-b", r.structured().get("holder"));
    }

    @Test
    void thePromptIsTheReadmesSystemPromptRule() throws Exception {
        String rule;
        try (var in = FenceMcpServer.class.getResourceAsStream("ownership-rule.txt")) {
            rule = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
        }
        assertTrue(rule.startsWith("Leases and FENCED."), rule);
        assertTrue(
                Files.readString(Path.of("README.md")).contains("```text\n" + rule + "\n```"),
                "README's system-prompt block and the MCP prompt are one text");
    }
}
