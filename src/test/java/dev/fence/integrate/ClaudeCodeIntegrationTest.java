package dev.fence.integrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.json.Json;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence integrate claude-code} and the hooks it installs, in-process: the files merged into what a
 * project already has, and the hook commands fed the JSON Claude Code sends on stdin, on a real SQLite
 * store whose lease times follow a fake clock.
 */
class ClaudeCodeIntegrationTest {
    static final String HOOK = "fence integrate claude-code hook ";

    @TempDir
    Path tmp;

    FakeClock clock;
    FenceCli fence;
    Path project;

    @BeforeEach
    void setUp() throws Exception {
        clock = new FakeClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
        fence = new FenceCli(Map.of("FENCE_STORE", "sqlite:" + tmp.resolve("fence.db")), clock);
        project = Files.createDirectories(tmp.resolve("project"));
    }

    private FenceCli.Run integrate(String... more) {
        List<String> args =
                new java.util.ArrayList<>(List.of("integrate", "claude-code", "--project", project.toString()));
        args.addAll(List.of(more));
        return fence.run(tmp, args.toArray(new String[0]));
    }

    @Test
    void mergesIntoTheProjectsFilesKeepsEveryOtherKeyIsIdempotentAndRemovesExactlyItsOwn() throws Exception {
        Path settings = Files.createDirectories(project.resolve(".claude")).resolve("settings.json");
        String theirs = "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(npm test)\"]},\n"
                + "  \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\","
                + " \"command\": \"./lint.sh\"}]}],\n  \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\":"
                + " \"./notify.sh\"}]}]}\n}\n";
        Files.writeString(settings, theirs);
        Path mcp = project.resolve(".mcp.json");
        String theirMcp = "{\"mcpServers\": {\"github\": {\"command\": \"gh-mcp\", \"args\": []}}}\n";
        Files.writeString(mcp, theirMcp);

        FenceCli.Run dry = integrate("--holder", "agent-a", "--repo", "app", "--dry-run");
        assertEquals(0, dry.exit(), dry.all());
        assertTrue(dry.out().contains("would write " + settings), dry.all());
        assertEquals(theirs, Files.readString(settings), "--dry-run changes nothing");

        FenceCli.Run wrote = integrate("--holder", "agent-a", "--repo", "app", "--store", "sqlite:/srv/f.db");
        assertEquals(0, wrote.exit(), wrote.all());
        JsonNode s = Json.read(Files.readString(settings));
        assertEquals("opus", s.get("model").asText());
        assertEquals("Bash(npm test)", s.get("permissions").get("allow").get(0).asText());
        assertEquals(
                "./notify.sh",
                s.get("hooks")
                        .get("Stop")
                        .get(0)
                        .get("hooks")
                        .get(0)
                        .get("command")
                        .asText());
        JsonNode pre = s.get("hooks").get("PreToolUse");
        assertEquals("./lint.sh", pre.get(0).get("hooks").get(0).get("command").asText(), "their hook stays first");
        assertEquals("*", pre.get(1).get("matcher").asText());
        assertEquals(
                HOOK + "pre-tool-use --holder agent-a --store sqlite:/srv/f.db --ttl 2m",
                pre.get(1).get("hooks").get(0).get("command").asText());
        assertEquals("Bash", pre.get(2).get("matcher").asText());
        assertEquals(
                HOOK + "guard-bash --holder agent-a --repo app",
                pre.get(2).get("hooks").get(0).get("command").asText());
        JsonNode start = s.get("hooks").get("SessionStart").get(0);
        assertEquals("compact|resume", start.get("matcher").asText());
        assertEquals(
                HOOK + "session-start --holder agent-a --store sqlite:/srv/f.db",
                start.get("hooks").get(0).get("command").asText());
        assertTrue(s.get("hooks")
                .get("PostToolUse")
                .get(0)
                .get("hooks")
                .get(0)
                .get("command")
                .asText()
                .startsWith(HOOK + "post-tool-use --holder agent-a"));
        JsonNode m = Json.read(Files.readString(mcp));
        assertEquals("gh-mcp", m.get("mcpServers").get("github").get("command").asText());
        JsonNode server = m.get("mcpServers").get("fence");
        assertEquals("fence", server.get("command").asText());
        assertEquals(
                "[\"mcp\",\"--holder\",\"agent-a\",\"--store\",\"sqlite:/srv/f.db\",\"--repo\",\"app\"]",
                server.get("args").toString());

        String once = Files.readString(settings);
        String onceMcp = Files.readString(mcp);
        FenceCli.Run again = integrate("--holder", "agent-a", "--repo", "app", "--store", "sqlite:/srv/f.db");
        assertEquals(0, again.exit(), again.all());
        assertTrue(
                again.out().contains("unchanged " + settings) && again.out().contains("unchanged " + mcp), again.all());
        assertEquals(once, Files.readString(settings));
        assertEquals(onceMcp, Files.readString(mcp));

        FenceCli.Run other = integrate("--holder", "agent-b");
        assertEquals(0, other.exit(), other.all());
        String changed = Files.readString(settings);
        assertFalse(changed.contains("agent-a"), "a new holder replaces fence's entries, never adds beside them");
        assertEquals(1, Json.read(changed).get("hooks").get("SessionStart").size());

        FenceCli.Run removed = integrate("--remove");
        assertEquals(0, removed.exit(), removed.all());
        assertEquals(Json.read(theirs), Json.read(Files.readString(settings)), "only fence's entries went");
        assertEquals(Json.read(theirMcp), Json.read(Files.readString(mcp)));
        assertFalse(Files.readString(settings).contains("integrate claude-code"));
    }

    @Test
    void inAnEmptyProjectItCreatesBothFilesAndRemoveDeletesThemAgain() throws Exception {
        assertEquals(0, integrate("--holder", "agent-a").exit());
        assertTrue(Files.exists(project.resolve(".claude/settings.json")));
        assertTrue(Files.exists(project.resolve(".mcp.json")));
        assertEquals(0, integrate("--remove").exit());
        assertFalse(Files.exists(project.resolve(".claude/settings.json")));
        assertFalse(Files.exists(project.resolve(".mcp.json")));
    }

    @Test
    void aFileThatIsNotJsonIsLeftAloneWithAClearError() throws Exception {
        Path settings = Files.createDirectories(project.resolve(".claude")).resolve("settings.json");
        Files.writeString(settings, "{ not json");
        FenceCli.Run r = integrate("--holder", "agent-a");
        assertEquals(6, r.exit(), r.all());
        assertTrue(r.err().contains("is not a JSON object"), r.all());
        assertEquals("{ not json", Files.readString(settings));
        assertEquals(2, integrate().exit(), "a holder is needed to install");
    }

    private static String toolUse(String event, String tool, String inputJson) {
        return "{\"session_id\":\"s1\",\"transcript_path\":\"/tmp/t.jsonl\",\"cwd\":\"/p\",\"hook_event_name\":\""
                + event + "\",\"tool_name\":\"" + tool + "\",\"tool_input\":" + inputJson + ",\"tool_use_id\":\"t1\"}";
    }

    private Instant expiry(String resource) throws Exception {
        FenceCli.Run r = fence.run(tmp, "lease", "status", "--resource", resource, "--json");
        assertEquals(0, r.exit(), r.all());
        return Instant.parse(
                Json.read(r.out()).get("lastLease").get("expiresAt").asText());
    }

    @Test
    void theToolUseHooksRenewTheHoldersLeasesAndLeaveLostOnesAndOtherHoldersAlone() throws Exception {
        FenceCli.Run a = fence.run(
                tmp, "lease", "acquire", "--resource", "db/migrations", "--holder", "agent-a", "--ttl", "30s");
        assertEquals(0, a.exit(), a.all());
        Instant first = expiry("db/migrations");

        clock.advance(Duration.ofSeconds(20));
        FenceCli.Run pre = fence.runWithInput(
                tmp,
                toolUse("PreToolUse", "Read", "{\"file_path\":\"/p/x\"}"),
                "integrate",
                "claude-code",
                "hook",
                "pre-tool-use",
                "--holder",
                "agent-a",
                "--ttl",
                "30s");
        assertEquals(0, pre.exit(), pre.all());
        assertTrue(pre.out().startsWith("fence: renewed db/migrations (token "), pre.all());
        assertEquals(first.plusSeconds(20), expiry("db/migrations"), "renewed to now + ttl");

        clock.advance(Duration.ofSeconds(10));
        FenceCli.Run post = fence.runWithInput(
                tmp,
                toolUse("PostToolUse", "Read", "{\"file_path\":\"/p/x\"}"),
                "integrate",
                "claude-code",
                "hook",
                "post-tool-use",
                "--holder",
                "agent-a",
                "--ttl",
                "1m");
        assertEquals(0, post.exit(), post.all());
        assertEquals(first.plusSeconds(30).plusSeconds(30), expiry("db/migrations"));

        clock.advance(Duration.ofMinutes(2));
        FenceCli.Run b = fence.run(tmp, "lease", "acquire", "--resource", "db/migrations", "--holder", "agent-b");
        assertEquals(0, b.exit(), b.all());
        FenceCli.Run start = fence.runWithInput(
                tmp,
                "{\"hook_event_name\":\"SessionStart\",\"source\":\"compact\"}",
                "integrate",
                "claude-code",
                "hook",
                "session-start",
                "--holder",
                "agent-a");
        assertEquals(0, start.exit(), start.all());
        assertTrue(start.out().contains("you hold no lease on db/migrations"), start.all());
        assertTrue(start.out().contains("superseded by"), start.all());

        Instant bExpiry = expiry("db/migrations");
        FenceCli.Run after = fence.runWithInput(
                tmp,
                toolUse("PreToolUse", "Bash", "{\"command\":\"ls\"}"),
                "integrate",
                "claude-code",
                "hook",
                "pre-tool-use",
                "--holder",
                "agent-a");
        assertEquals(
                0, after.exit(), "a lease lost before is reported by session-start, not on every call: " + after.all());
        assertEquals("", after.out());
        assertEquals(bExpiry, expiry("db/migrations"), "agent-a's hook never touches agent-b's lease");
    }

    @Test
    void aLeaseLapsedButNotTakenIsRenewedByTheNextToolCall() throws Exception {
        assertEquals(
                0,
                fence.run(tmp, "lease", "acquire", "--resource", "shared/notes", "--holder", "agent-a", "--ttl", "5s")
                        .exit());
        clock.advance(Duration.ofSeconds(60));
        FenceCli.Run pre = fence.runWithInput(
                tmp,
                toolUse("PreToolUse", "Edit", "{}"),
                "integrate",
                "claude-code",
                "hook",
                "pre-tool-use",
                "--holder",
                "agent-a",
                "--ttl",
                "30s");
        assertEquals(0, pre.exit(), pre.all());
        assertEquals(clock.instant().plusSeconds(30), expiry("shared/notes"));
    }

    @Test
    void theBashGuardBlocksAPlainGitPushWithExit2AndSaysWhatToUse() {
        String[] guard = {"integrate", "claude-code", "hook", "guard-bash", "--holder", "agent-a", "--repo", "app"};
        FenceCli.Run blocked = fence.runWithInput(
                tmp,
                toolUse(
                        "PreToolUse",
                        "Bash",
                        "{\"command\":\"git push --force origin main\",\"description\":\"push\"}"),
                guard);
        assertEquals(2, blocked.exit(), blocked.all());
        assertTrue(blocked.err().contains("fence push --repo app --holder agent-a"), blocked.all());
        assertTrue(blocked.err().contains("push_branch"), blocked.all());
        FenceCli.Run allowed = fence.runWithInput(
                tmp, toolUse("PreToolUse", "Bash", "{\"command\":\"fence push --repo app --holder agent-a\"}"), guard);
        assertEquals(0, allowed.exit(), allowed.all());
        assertEquals("", allowed.err());
        FenceCli.Run other = fence.runWithInput(tmp, toolUse("PreToolUse", "Read", "{\"file_path\":\"x\"}"), guard);
        assertEquals(0, other.exit(), other.all());
        FenceCli.Run garbage = fence.runWithInput(tmp, "not json", guard);
        assertEquals(2, garbage.exit(), "a guard fails closed: " + garbage.all());
    }
}
