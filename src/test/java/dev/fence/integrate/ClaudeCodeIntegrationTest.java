package dev.fence.integrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService;
import dev.fence.json.Json;
import dev.fence.mcp.FenceTools;
import dev.fence.mcp.ToolResult;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
    Path home;
    /** Where agent-a's grants are kept: what {@code fence integrate claude-code} writes by default. */
    Path grants;

    @BeforeEach
    void setUp() throws Exception {
        clock = new FakeClock(Instant.now().truncatedTo(ChronoUnit.MILLIS));
        home = Files.createDirectories(tmp.resolve("home"));
        grants = home.resolve(".fence/grants/agent-a");
        fence = new FenceCli(
                Map.of("FENCE_STORE", "sqlite:" + tmp.resolve("fence.db"), "HOME", home.toString()), clock);
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
                HOOK + "pre-tool-use --holder agent-a --store sqlite:/srv/f.db --ttl 2m --grants " + grants,
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
                "[\"mcp\",\"--holder\",\"agent-a\",\"--store\",\"sqlite:/srv/f.db\",\"--repo\",\"app\","
                        + "\"--grants\",\"" + grants + "\"]",
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

    /**
     * A URL with a password in it is refused before anything is written or printed: both files are the
     * project's, which {@code git add -A} stages and the agent itself reads.
     */
    @Test
    void aStoreOrServerUrlThatCarriesAPasswordIsRefusedAndNothingIsWritten() throws Exception {
        String[][] refused = {
            {"--store", "postgresql://fence:S3cretPW@127.0.0.1:5432/fence"},
            {"--store", "postgres://fence:S3cretPW@db-1:5432,db-2:5432/fence?timeout=5s"},
            {"--store", "postgresql://fence@127.0.0.1/fence?password=S3cretPW"},
            {"--store", "redis://:S3cretPW@127.0.0.1:6379/0"},
            {"--store", "rediss://fence:S3cretPW@cache.internal:6380"},
            {"--store", "redis://S3cretPW@127.0.0.1:6379"},
            {"--store", "redis-sentinel://s1:26379,s2:26379/primary?sentinelPassword=S3cretPW"},
            {"--server", "https://reader:S3cretPW@fence.internal:8700"},
        };
        for (String[] access : refused) {
            for (boolean dryRun : new boolean[] {true, false}) {
                FenceCli.Run r = dryRun
                        ? integrate("--holder", "agent-a", access[0], access[1], "--dry-run")
                        : integrate("--holder", "agent-a", access[0], access[1]);
                assertEquals(2, r.exit(), access[1] + ": " + r.all());
                assertTrue(r.err().contains(access[0] + " carries a password"), r.err());
                assertTrue(r.err().contains("FENCE_STORE") && r.err().contains("~/.pgpass"), r.err());
                assertTrue(r.err().contains("FENCE_CREDENTIAL_FILE"), r.err());
                assertFalse(r.all().contains("S3cretPW"), "the message never repeats the password: " + r.all());
                assertFalse(Files.exists(project.resolve(".mcp.json")), access[1]);
                assertFalse(Files.exists(project.resolve(".claude/settings.json")), access[1]);
            }
        }
        String[] allowed = {
            "postgresql://fence@127.0.0.1:5432/fence",
            "redis://127.0.0.1:6379/0",
            "redis://fence:@127.0.0.1:6379/0",
            "redis-sentinel://s1:26379,s2:26379/primary?sentinelPassword=",
            "sqlite:" + tmp.resolve("fence.db"),
        };
        for (String url : allowed) {
            FenceCli.Run r = integrate("--holder", "agent-a", "--store", url, "--dry-run");
            assertEquals(0, r.exit(), url + ": " + r.all());
            assertTrue(r.out().contains(url), r.out());
        }
        FenceCli.Run help = fence.run(tmp, "integrate", "claude-code", "--help");
        assertTrue(help.out().replaceAll("\\s+", " ").contains("A URL that carries a password"), help.out());
    }

    @Test
    void theGrantsDirectoryIsWrittenAsAnAbsolutePathAndWithoutAHomeItMustBeGiven() throws Exception {
        assertEquals(
                0,
                integrate("--holder", "../agent-a", "--store", "sqlite:/srv/f.db")
                        .exit());
        String settings = Files.readString(project.resolve(".claude/settings.json"));
        assertTrue(settings.contains("--grants " + home.resolve(".fence/grants/.._agent-a")), settings);

        FenceCli.Run given =
                fence.run(project, "integrate", "claude-code", "--holder", "agent-a", "--grants", "../agent-grants");
        assertEquals(0, given.exit(), given.all());
        String args = Json.read(Files.readString(project.resolve(".mcp.json")))
                .get("mcpServers")
                .get("fence")
                .get("args")
                .toString();
        assertTrue(args.endsWith("\"--grants\",\"" + tmp.resolve("agent-grants") + "\"]"), args);

        FenceCli homeless = new FenceCli(Map.of(), clock);
        FenceCli.Run refused = homeless.run(project, "integrate", "claude-code", "--holder", "agent-a");
        assertEquals(2, refused.exit(), refused.all());
        assertTrue(refused.err().contains("give --grants DIR"), refused.all());
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

    /** Runs a heartbeat hook ({@code pre-tool-use}, {@code post-tool-use}) fed a tool call's event. */
    private FenceCli.Run heartbeat(String event, String holder, String... more) {
        List<String> args = new java.util.ArrayList<>(List.of(
                "integrate", "claude-code", "hook", event.equals("PreToolUse") ? "pre-tool-use" : "post-tool-use"));
        args.addAll(List.of("--holder", holder));
        args.addAll(List.of(more));
        return fence.runWithInput(tmp, toolUse(event, "Read", "{\"file_path\":\"/p/x\"}"), args.toArray(new String[0]));
    }

    /** {@code fence lease acquire}, keeping the grant in {@code grantFile} as a harness does. */
    private void acquire(String resource, String holder, String ttl, Path grantFile) {
        List<String> args = new java.util.ArrayList<>(
                List.of("lease", "acquire", "--resource", resource, "--holder", holder, "--ttl", ttl));
        if (grantFile != null) {
            args.addAll(List.of("--grant-file", grantFile.toString()));
        }
        FenceCli.Run r = fence.run(tmp, args.toArray(new String[0]));
        assertEquals(0, r.exit(), r.all());
    }

    @Test
    void theToolUseHooksRenewTheHoldersLeasesAndLeaveLostOnesAndOtherHoldersAlone() throws Exception {
        acquire("db/migrations", "agent-a", "30s", grants.resolve("migrations.grant"));
        Instant first = expiry("db/migrations");

        clock.advance(Duration.ofSeconds(20));
        FenceCli.Run pre = heartbeat("PreToolUse", "agent-a", "--ttl", "30s", "--grants", grants.toString());
        assertEquals(0, pre.exit(), pre.all());
        assertTrue(pre.out().startsWith("fence: renewed db/migrations (token "), pre.all());
        assertEquals(first.plusSeconds(20), expiry("db/migrations"), "renewed to now + ttl");

        clock.advance(Duration.ofSeconds(10));
        FenceCli.Run post = heartbeat("PostToolUse", "agent-a", "--ttl", "1m", "--grants", grants.toString());
        assertEquals(0, post.exit(), post.all());
        assertEquals(first.plusSeconds(30).plusSeconds(30), expiry("db/migrations"));

        clock.advance(Duration.ofMinutes(2));
        acquire("db/migrations", "agent-b", "30s", null);
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
        FenceCli.Run after = heartbeat("PreToolUse", "agent-a", "--grants", grants.toString());
        assertEquals(
                0, after.exit(), "a lease lost before is reported by session-start, not on every call: " + after.all());
        assertEquals("", after.out());
        assertEquals(bExpiry, expiry("db/migrations"), "agent-a's hook never touches agent-b's lease");
    }

    @Test
    void aLeaseLapsedButNotTakenIsRenewedByTheNextToolCall() throws Exception {
        acquire("shared/notes", "agent-a", "5s", grants.resolve("notes.grant"));
        clock.advance(Duration.ofSeconds(60));
        FenceCli.Run pre = heartbeat("PreToolUse", "agent-a", "--ttl", "30s", "--grants", grants.toString());
        assertEquals(0, pre.exit(), pre.all());
        assertEquals(clock.instant().plusSeconds(30), expiry("shared/notes"));
    }

    /**
     * The integration's own path: the {@code fence mcp} server it installs takes the lease and keeps the
     * grant (proof included, mode 0600) in the grants directory; the heartbeat renews with that proof, and
     * the grant goes when the lease is released.
     */
    @Test
    void theHeartbeatRenewsWithTheGrantTheMcpServerKept() throws Exception {
        String store = "sqlite:" + tmp.resolve("fence.db");
        try (LeaseOperations leases =
                new LeaseService(Stores.open(store, StoreOptions.defaults().withCallerClock()), clock)) {
            FenceTools tools = new FenceTools(
                    leases,
                    new FenceTools.Settings(
                            "agent-a",
                            null,
                            project,
                            "origin",
                            Duration.ofSeconds(30),
                            Map.of("PATH", System.getenv("PATH")),
                            clock,
                            grants));
            ToolResult acquired = tools.call("lease_acquire", Map.of("resource", "db/migrations"));
            assertFalse(acquired.error(), acquired.text());
            long token = ((Number) acquired.structured().get("token")).longValue();

            List<Path> kept;
            try (var files = Files.list(grants)) {
                kept = files.toList();
            }
            assertEquals(1, kept.size(), kept.toString());
            assertEquals(PosixFilePermissions.fromString("rw-------"), Files.getPosixFilePermissions(kept.get(0)));
            JsonNode grant = Json.read(Files.readString(kept.get(0)));
            assertEquals("db/migrations", grant.get("resource").asText());
            assertEquals(token, grant.get("token").asLong());
            assertTrue(grant.get("proof").asText().startsWith("fp"), "the proof is kept: " + grant.get("status"));

            Instant first = expiry("db/migrations");
            clock.advance(Duration.ofSeconds(20));
            FenceCli.Run pre = heartbeat("PreToolUse", "agent-a", "--ttl", "30s", "--grants", grants.toString());
            assertEquals(0, pre.exit(), pre.all());
            assertEquals(
                    "fence: renewed db/migrations (token " + token + ") until " + first.plusSeconds(20) + "\n",
                    pre.out());
            assertEquals(first.plusSeconds(20), expiry("db/migrations"));

            ToolResult released = tools.call("lease_release", Map.of("resource", "db/migrations"));
            assertFalse(released.error(), released.text());
            try (var files = Files.list(grants)) {
                assertEquals(List.of(), files.toList(), "a released grant is not kept");
            }
        }
    }

    /**
     * A holder's name and token are public: invoking the heartbeat for a holder whose grant it does not
     * keep (another agent's, or one taken without keeping the grant) must not keep that lease alive. The
     * hook says so and lets the tool call go on.
     */
    @Test
    void aLeaseWhoseGrantTheHookDoesNotKeepIsNotRenewed() throws Exception {
        acquire("db/migrations", "agent-b", "30s", tmp.resolve("agent-b/migrations.grant"));
        acquire("shared/notes", "agent-a", "30s", null);
        Instant bFirst = expiry("db/migrations");
        Instant aFirst = expiry("shared/notes");
        clock.advance(Duration.ofSeconds(20));

        FenceCli.Run asB = heartbeat("PreToolUse", "agent-b", "--ttl", "1m", "--grants", grants.toString());
        assertEquals(0, asB.exit(), "the tool call goes on: " + asB.all());
        assertTrue(asB.out().contains("not renewing db/migrations (token "), asB.all());
        assertFalse(asB.out().contains("fence: renewed"), asB.all());
        assertEquals(bFirst, expiry("db/migrations"), "agent-b's lease is not extended");

        FenceCli.Run noGrant = heartbeat("PostToolUse", "agent-a", "--ttl", "1m", "--grants", grants.toString());
        assertEquals(0, noGrant.exit(), noGrant.all());
        assertTrue(noGrant.out().contains("not renewing shared/notes (token "), noGrant.all());
        assertEquals(aFirst, expiry("shared/notes"), "a lease taken without keeping its grant is not extended");

        FenceCli.Run noDir = heartbeat("PreToolUse", "agent-b", "--ttl", "1m");
        assertEquals(0, noDir.exit(), noDir.all());
        assertTrue(noDir.out().contains("not renewing db/migrations"), noDir.all());
        assertTrue(noDir.out().contains("--grants"), noDir.all());
        assertEquals(bFirst, expiry("db/migrations"));
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
