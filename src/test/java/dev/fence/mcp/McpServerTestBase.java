package dev.fence.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.LeaseOperations;
import dev.fence.core.LeaseService;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FenceCli;
import dev.fence.testing.FenceMcpCommand;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence mcp} as an MCP client starts and drives it: the SDK's own client runs {@code java -jar
 * fence.jar mcp} as a child over stdio, against a bare repository with fence's hook installed and a real
 * store (subclasses: SQLite, a private redis-server). The incident of design §0 through tools: the
 * paused agent's push_branch is FENCED as a structured tool error, and the remote keeps the successor's
 * work.
 */
@ProcessTest
abstract class McpServerTestBase {
    static final String MAIN = "refs/heads/main";
    static final String RESOURCE = "git:app:" + MAIN;

    @TempDir
    Path tmp;

    GitFixture git;
    FenceCli fence;
    String store;
    Path bare;
    Path cloneA;
    final List<String> stderr = Collections.synchronizedList(new ArrayList<>());
    final List<String> seen = Collections.synchronizedList(new ArrayList<>());
    McpSyncClient client;

    /** The store URL for this test (a file under {@code tmp}, or a private redis-server). */
    protected abstract String storeUrl(Path tmp);

    @BeforeEach
    void setUp() {
        git = new GitFixture(tmp);
        store = storeUrl(tmp);
        fence = new FenceCli(git.env(Map.of("FENCE_STORE", store)), Clock.systemUTC());
        bare = git.bareWithMain("app");
        FenceCli.Run installed = fence.run(
                tmp,
                "install",
                "--bare",
                bare.toString(),
                "--launcher",
                git.launcher().toString(),
                "--store",
                store);
        assertEquals(0, installed.exit(), installed.all());
        cloneA = git.clone(bare, "agent-a");
    }

    @AfterEach
    void stop() {
        if (client != null) {
            client.closeGracefully();
        }
    }

    McpSyncClient start(String... more) {
        ServerParameters params = ServerParameters.builder(FenceMcpCommand.java())
                .args(FenceMcpCommand.args(store, cloneA, more))
                .env(git.env())
                .build();
        StdioClientTransport transport = new StdioClientTransport(params, McpJsonDefaults.getMapper());
        transport.setStdErrorHandler(stderr::add);
        client = McpClient.sync(transport)
                .requestTimeout(Duration.ofSeconds(60))
                .initializationTimeout(Duration.ofSeconds(60))
                .build();
        client.initialize();
        return client;
    }

    /** Calls a tool; remembers everything it answered, for the proof check. */
    McpSchema.CallToolResult call(String tool, Map<String, Object> args) {
        McpSchema.CallToolResult r = client.callTool(new McpSchema.CallToolRequest(tool, args));
        seen.add(text(r));
        seen.add(String.valueOf(r.structuredContent()));
        return r;
    }

    static String text(McpSchema.CallToolResult r) {
        return r.content().stream()
                .map(c -> c instanceof McpSchema.TextContent t ? t.text() : String.valueOf(c))
                .collect(Collectors.joining("\n"));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> structured(McpSchema.CallToolResult r) {
        assertNotNull(r.structuredContent(), "structured content: " + text(r));
        return (Map<String, Object>) r.structuredContent();
    }

    static long number(Map<String, Object> m, String key) {
        return ((Number) m.get(key)).longValue();
    }

    /**
     * agent-a takes {@code resource} through the CLI, not the server under test; {@code --json}.
     *
     * @param grantFile where the grant is kept, or null for nowhere
     */
    FenceCli.Run acquireElsewhere(String resource, String ttl, Path grantFile) {
        List<String> args = new ArrayList<>(
                List.of("lease", "acquire", "--resource", resource, "--holder", "agent-a", "--ttl", ttl, "--json"));
        if (grantFile != null) {
            args.addAll(List.of("--grant-file", grantFile.toString()));
        }
        FenceCli.Run r = fence.run(tmp, args.toArray(new String[0]));
        assertEquals(0, r.exit(), r.all());
        return r;
    }

    /** The store's own view of the lease (through the CLI, not the server under test). */
    JsonNode storeLease() throws Exception {
        FenceCli.Run r = fence.run(tmp, "lease", "status", "--resource", RESOURCE, "--json");
        assertEquals(0, r.exit(), r.all());
        return Json.read(r.out()).get("lastLease");
    }

    @Test
    void thePausedAgentsPushBranchIsFencedAsAStructuredResultAndTheRemoteKeepsTheSuccessorsWork() throws Exception {
        start();
        Set<String> names =
                client.listTools().tools().stream().map(McpSchema.Tool::name).collect(Collectors.toSet());
        assertEquals(
                Set.of(
                        "lease_acquire",
                        "lease_renew",
                        "lease_release",
                        "lease_status",
                        "read_state",
                        "push_branch",
                        "read_file",
                        "write_file"),
                names);
        for (McpSchema.Tool t : client.listTools().tools()) {
            assertEquals("object", t.inputSchema().get("type"), t.name());
            assertFalse(t.description().isBlank(), t.name());
        }

        var acquired = call("lease_acquire", Map.of("branch", "main", "ttl", "3s"));
        assertFalse(Boolean.TRUE.equals(acquired.isError()), text(acquired));
        Map<String, Object> grant = structured(acquired);
        long tokenA = number(grant, "token");
        assertEquals(RESOURCE, grant.get("resource"));
        assertFalse(grant.containsKey("proof"), "no proof in a result: " + grant);
        assertFalse(grant.containsKey("grantSha"), "no expected SHA in a result: " + grant);
        String proof;
        // The test reads the proof the server holds, to look for it in everything shown: through a port that
        // has authenticated the holder, since direct mode issues none.
        try (LeaseOperations leases =
                LeaseService.forAuthenticatedHolders(Stores.open(store, StoreOptions.defaults()), Clock.systemUTC())) {
            proof = ((LeaseOperations.ProofOutcome.Issued) leases.proof(RESOURCE, "agent-a", tokenA)).proof();
        }

        String a1 = git.commit(cloneA, "notes.txt", "A was here\n", "A: first change");
        var pushed = call("push_branch", Map.of("branch", "main"));
        assertFalse(Boolean.TRUE.equals(pushed.isError()), text(pushed));
        assertEquals(true, structured(pushed).get("pushed"));
        assertEquals(a1, structured(pushed).get("tip"));
        assertEquals(a1, git.tip(bare, MAIN), "push_branch landed");

        git.commit(cloneA, "notes.txt", "A was here, then paused\n", "A: second change");
        Thread.sleep(3_500); // A pauses past its 3 s TTL

        Path cloneB = git.clone(bare, "agent-b");
        FenceCli.Run grantB = fence.run(
                cloneB,
                "lease",
                "acquire",
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-b",
                "--ttl",
                "1m",
                "--git-remote",
                "origin",
                "--json");
        assertEquals(0, grantB.exit(), "another holder acquires after expiry: " + grantB.all());
        long tokenB = Json.read(grantB.out()).get("token").asLong();
        String b1 = git.commit(cloneB, "notes.txt", "B rewrote it\n", "B: rewrite");
        FenceCli.Run pushB =
                fence.holding(Json.read(grantB.out())).run(cloneB, "push", "--repo", "app", "--holder", "agent-b");
        assertEquals(0, pushB.exit(), pushB.all());
        assertEquals(b1, git.tip(bare, MAIN));

        var stale = call("push_branch", Map.of("branch", "main"));
        assertTrue(stale.isError(), "FENCED is an error result: " + text(stale));
        Map<String, Object> f = structured(stale);
        assertEquals(true, f.get("fenced"), f.toString());
        assertEquals("superseded", f.get("reason"));
        assertEquals(RESOURCE, f.get("resource"));
        assertEquals(tokenA, number(f, "token"));
        assertEquals(tokenB, number(f, "current"));
        assertEquals("read_state {\"branch\": \"main\"}", f.get("reread"));
        String message = text(stale);
        assertTrue(message.startsWith("FENCED resource=" + RESOURCE + " ref=" + MAIN + " token=" + tokenA), message);
        assertTrue(message.contains("NOT a transient error"), message);
        assertTrue(message.contains("read_state {\"branch\": \"main\"}"), message);
        assertEquals(b1, git.tip(bare, MAIN), "the remote is untouched");

        var busy = call("lease_acquire", Map.of("branch", "main"));
        assertTrue(busy.isError());
        assertEquals(false, structured(busy).get("fenced"));
        assertEquals("busy", structured(busy).get("error"));
        assertEquals("agent-b", structured(busy).get("holder"));

        var state = call("read_state", Map.of("branch", "main"));
        assertFalse(Boolean.TRUE.equals(state.isError()), text(state));
        Map<String, Object> s = structured(state);
        assertEquals(b1, s.get("remoteTip"));
        assertEquals(false, s.get("held"));
        assertEquals(b1, git.git(cloneA, "rev-parse", "origin/main").strip(), "read_state fetched");

        client.closeGracefully();
        client = null;
        for (String shown : seen) {
            assertFalse(shown.contains(proof), "the proof appeared in a tool result: " + shown);
            assertFalse(shown.contains("fp2."), shown);
        }
        for (String line : stderr) {
            assertFalse(line.contains(proof), "the proof appeared on the server's stderr: " + line);
        }
    }

    @Test
    void everyToolCallOnAHeldResourceRenewsItsLease() throws Exception {
        start();
        Map<String, Object> grant = structured(call("lease_acquire", Map.of("branch", "main", "ttl", "30s")));
        Instant first = Instant.parse((String) grant.get("expiresAt"));
        assertEquals(first, Instant.parse(storeLease().get("expiresAt").asText()));

        Thread.sleep(1_100);
        Map<String, Object> status = structured(call("lease_status", Map.of("branch", "main")));
        assertEquals(true, status.get("held"), status.toString());
        Instant second = Instant.parse((String) status.get("expiresAt"));
        assertTrue(second.isAfter(first.plusMillis(1_000)), first + " then " + second);
        assertEquals(second, Instant.parse(storeLease().get("expiresAt").asText()), "the store's lease moved too");

        Thread.sleep(1_100);
        Map<String, Object> read = structured(call("read_state", Map.of("branch", "main")));
        Instant third = Instant.parse((String) read.get("expiresAt"));
        assertTrue(third.isAfter(second.plusMillis(1_000)), second + " then " + third);
        assertEquals(third, Instant.parse(storeLease().get("expiresAt").asText()));

        Map<String, Object> released = structured(call("lease_release", Map.of("branch", "main")));
        assertEquals(true, released.get("released"));
        assertTrue(storeLease().get("released").asBoolean());
        var after = call("lease_renew", Map.of("branch", "main"));
        assertTrue(after.isError(), text(after));
        assertEquals(true, structured(after).get("fenced"));
    }

    /**
     * A lease the holder took elsewhere, with its grant kept in the server's grants directory, is taken
     * over with that grant; one whose grant is not kept is shown as held but not renewed: in direct mode
     * a holder's name and token are public, and no one issues its proof on them.
     */
    @Test
    void aLeaseTheHolderTookElsewhereIsShownAsHeldAndTakenOverWithItsKeptGrant() throws Exception {
        Path grants = tmp.resolve("grants");
        FenceCli.Run cli = acquireElsewhere("shared/plan", "10s", grants.resolve("plan.grant"));
        Instant granted = Instant.parse(Json.read(cli.out()).get("expiresAt").asText());
        FenceCli.Run unkept = acquireElsewhere("shared/todo", "10s", null);
        Instant todoExpiry =
                Instant.parse(Json.read(unkept.out()).get("expiresAt").asText());
        start("--grants", grants.toString());
        Map<String, Object> status = structured(call("lease_status", Map.of("resource", "shared/plan")));
        assertEquals(true, status.get("held"), status.toString());
        assertEquals(Json.read(cli.out()).get("token").asLong(), number(status, "token"));
        Map<String, Object> renewed = structured(call("lease_renew", Map.of("resource", "shared/plan", "ttl", "1m")));
        assertEquals(true, renewed.get("renewed"), renewed.toString());
        assertTrue(
                Instant.parse((String) renewed.get("expiresAt")).isAfter(granted.plusSeconds(40)), renewed.toString());

        Map<String, Object> todo = structured(call("lease_status", Map.of("resource", "shared/todo")));
        assertEquals(true, todo.get("held"), todo.toString());
        var refused = call("lease_renew", Map.of("resource", "shared/todo", "ttl", "1m"));
        assertTrue(refused.isError(), text(refused));
        assertEquals("invalid", structured(refused).get("error"), text(refused));
        assertTrue(text(refused).contains("needs the proof its grant returned"), text(refused));
        FenceCli.Run todoNow = fence.run(tmp, "lease", "status", "--resource", "shared/todo", "--json");
        assertEquals(
                todoExpiry,
                Instant.parse(Json.read(todoNow.out())
                        .get("lastLease")
                        .get("expiresAt")
                        .asText()),
                "not renewed");
    }

    /**
     * lease_acquire shows the holder's grant: the one the server keeps, or one kept in its grants directory
     * that a restarted server has not taken up yet; a live lease under the holder's name whose grant the
     * server does not have is busy, as naming a holder takes nothing in direct mode.
     */
    @Test
    void leaseAcquireTakesTheHoldersLiveLeaseAgainOnlyWithItsGrant() throws Exception {
        Path grants = tmp.resolve("grants");
        FenceCli.Run kept = acquireElsewhere("shared/plan", "5m", grants.resolve("plan.grant"));
        acquireElsewhere("shared/todo", "5m", null);
        start("--grants", grants.toString());

        Map<String, Object> again = structured(call("lease_acquire", Map.of("resource", "shared/plan")));
        assertEquals(true, again.get("acquired"), again.toString());
        assertTrue(number(again, "token") > Json.read(kept.out()).get("token").asLong(), again.toString());
        Map<String, Object> third = structured(call("lease_acquire", Map.of("resource", "shared/plan")));
        assertTrue(number(third, "token") > number(again, "token"), third.toString());

        var busy = call("lease_acquire", Map.of("resource", "shared/todo"));
        assertTrue(busy.isError(), text(busy));
        assertEquals("agent-a", structured(busy).get("holder"), text(busy));
        assertTrue(text(busy).contains("under your name"), text(busy));
    }

    @Test
    void malformedArgumentsAreToolErrorsNamingTheArgument() {
        start();
        assertInvalid(call("lease_acquire", Map.of("branch", 5)), "branch");
        assertInvalid(call("lease_acquire", Map.of("branch", "main", "ttl", "soon")), "ttl");
        assertInvalid(call("lease_acquire", Map.of()), "branch");
        assertInvalid(call("lease_acquire", Map.of("branch", "main", "resource", "db/x")), "branch");
        assertInvalid(call("lease_acquire", Map.of("resource", RESOURCE)), "resource");
        assertInvalid(call("lease_acquire", Map.of("branch", "ma in")), "branch");
        assertInvalid(call("push_branch", Map.of("branch", "main", "force", true)), "force");
        McpSchema.CallToolResult proof = call("push_branch", Map.of("branch", "main", "proof", "fp2.x"));
        assertInvalid(proof, "proof");
        assertTrue(text(proof).contains("stay inside fence"), text(proof));
        assertInvalid(call("push_branch", Map.of()), "branch");
    }

    private static void assertInvalid(McpSchema.CallToolResult r, String argument) {
        assertTrue(r.isError(), text(r));
        Map<String, Object> m = structured(r);
        assertEquals(false, m.get("fenced"), m.toString());
        assertEquals("invalid", m.get("error"), m.toString());
        assertEquals(argument, m.get("argument"), m.toString());
        assertTrue(text(r).contains(argument), text(r));
        assertNotEquals("", text(r));
    }
}
