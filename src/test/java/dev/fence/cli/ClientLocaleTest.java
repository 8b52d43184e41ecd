package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.fence.json.Json;
import dev.fence.testing.FenceMcpCommand;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client command started in a locale that cannot carry a name beyond ASCII (agents' tool runners and
 * service managers often run in {@code LANG=C}) refuses it rather than act on another name: a lease on
 * {@code refs/heads/café} typed there is not granted on a mangled resource, and a grant for it carried in
 * from a UTF-8 shell pushes nothing. Each command runs in a JVM of its own, started by a script written as
 * UTF-8 bytes, so that the name reaches it as a shell passes it, whatever this JVM's own locale.
 */
@ProcessTest
class ClientLocaleTest {
    static final String BRANCH = "caf\u00e9";

    @TempDir
    Path tmp;

    GitFixture git;
    Path db;

    @BeforeEach
    void setUp() {
        git = new GitFixture(tmp);
        db = tmp.resolve("fence.db");
    }

    @Test
    void aNameTheLocaleCouldNotReadIsRefusedBeforeAnythingIsDone() throws Exception {
        String acquire = fence() + " lease acquire --store 'sqlite:" + db + "' --repo app --ref '" + BRANCH
                + "' --holder agent-a --json";

        Outcome c = sh("LC_ALL=C " + acquire);
        assertEquals(2, c.exit(), c.all());
        assertTrue(c.err().contains("argument 8"), c.all());
        assertTrue(c.err().contains("could not read as text"), c.all());
        assertTrue(c.err().contains("UTF-8 locale such as C.UTF-8"), c.all());
        assertFalse(Files.exists(db), "the store was not even opened");

        // The same command in a UTF-8 locale leases the branch the name stands for.
        Outcome utf8 = sh("LC_ALL=C.UTF-8 " + acquire);
        assertEquals(0, utf8.exit(), utf8.all());
        assertEquals(
                "git:app:refs/heads/" + BRANCH,
                Json.read(utf8.out()).get("resource").asText());
    }

    /**
     * A Latin-1 locale reads every byte as some character: the UTF-8 {@code café} arrives as {@code cafÃ©}
     * (and a Latin-1 {@code é} would reach git as a byte no ref is named by). Any argument beyond ASCII is
     * refused there. glibc reads {@code x.ISO-8859-1@a.UTF-8} as Latin-1 from the test's own {@code LOCPATH}.
     */
    @Test
    void aLatin1LocaleTakesArgumentsInAsciiOnly() throws Exception {
        Path locales = tmp.resolve("locales");
        assumeTrue(
                sh("mkdir -p '" + locales + "' && localedef -i en_US -f ISO-8859-1 '" + locales.resolve("x.ISO-8859-1")
                                                + "' >/dev/null 2>&1")
                                        .exit()
                                <= 1
                        && Files.isDirectory(locales.resolve("x.ISO-8859-1")),
                "localedef or en_US's locale source is not installed");
        Outcome latin1 = sh("LOCPATH='" + locales + "' LC_ALL=x.ISO-8859-1@a.UTF-8 " + fence()
                + " lease acquire --store 'sqlite:" + db + "' --repo app --ref '" + BRANCH + "' --holder agent-a");
        assertEquals(2, latin1.exit(), latin1.all());
        assertTrue(latin1.err().contains("argument 8"), latin1.all());
        assertTrue(latin1.err().contains("goes beyond ASCII"), latin1.all());
        assertTrue(latin1.err().contains("UTF-8 locale such as C.UTF-8"), latin1.all());
        assertFalse(Files.exists(db), "the store was not even opened");
    }

    /**
     * A migration's name comes from its directory, not the arguments: in {@code LANG=C} {@code
     * 0001_café.sql} would be read, applied and recorded under a name it does not have.
     */
    @Test
    void aMigrationNamedBeyondAsciiIsRefusedInSuchALocale() throws Exception {
        assertEquals(
                0,
                sh("mkdir m && printf 'CREATE TABLE t (x INTEGER);\\n' > 'm/0001_" + BRANCH + ".sql'")
                        .exit());
        Outcome c = sh("LC_ALL=C " + fence() + " migrate status --db 'sqlite:" + tmp.resolve("app.db") + "' --dir m");
        assertEquals(2, c.exit(), c.all());
        assertTrue(c.err().contains("bad migration file name"), c.all());
        assertTrue(c.err().contains("UTF-8 locale such as C.UTF-8"), c.all());

        Outcome utf8 =
                sh("LC_ALL=C.UTF-8 " + fence() + " migrate status --db 'sqlite:" + tmp.resolve("app.db") + "' --dir m");
        assertEquals(0, utf8.exit(), utf8.all());
        assertTrue(utf8.out().contains("0001_" + BRANCH + ".sql"), utf8.all());
    }

    @Test
    void aGrantCarriedIntoSuchALocalePushesNothing() throws Exception {
        Path bare = git.bareWithMain("app");
        Path clone = git.clone(bare, "agent-a");
        Path grant = tmp.resolve("app.grant");
        Outcome setUp = sh("set -e; cd '" + clone + "'; git checkout -q -b '" + BRANCH + "';"
                + " git commit -q --allow-empty -m start; git push -q origin '" + BRANCH + "';"
                + " LC_ALL=C.UTF-8 " + fence() + " lease acquire --store 'sqlite:" + db + "' --repo app --ref '"
                + BRANCH + "' --holder agent-a --git-remote origin --grant-file '" + grant + "' >/dev/null;"
                + " git commit -q --allow-empty -m 'work under the lease'");
        assertEquals(0, setUp.exit(), setUp.all());
        String refsBefore = git.git(bare, "for-each-ref");

        Outcome push = sh("cd '" + clone + "'; LC_ALL=C " + fence() + " push --store 'sqlite:" + db + "' --grant-file '"
                + grant + "'");
        assertEquals(6, push.exit(), push.all());
        assertTrue(push.err().contains("cannot give git the argument"), push.all());
        assertTrue(push.err().contains("UTF-8 locale such as C.UTF-8"), push.all());
        assertEquals(refsBefore, git.git(bare, "for-each-ref"), "nothing was pushed, to that ref or another");
    }

    /**
     * An MCP server started in {@code LANG=C} gets the agent's names as UTF-8 JSON, whatever its locale; a path
     * it could not hand to the file system as the bytes the agent meant is a bad argument that says why.
     */
    @Test
    void anMcpServerInSuchALocaleRefusesThePathItCannotName() throws Exception {
        Path bare = git.bareWithMain("app");
        Path clone = git.clone(bare, "agent-a");
        assertEquals(
                0,
                sh("printf 'agent notes\\n' > '" + clone + "/" + BRANCH + ".txt'")
                        .exit());
        Map<String, String> env = new HashMap<>(git.env());
        env.put("LC_ALL", "C");
        ServerParameters params = ServerParameters.builder(FenceMcpCommand.java())
                .args(FenceMcpCommand.args("sqlite:" + db, clone))
                .env(env)
                .build();
        McpSyncClient client = McpClient.sync(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
                .requestTimeout(Duration.ofSeconds(60))
                .initializationTimeout(Duration.ofSeconds(60))
                .build();
        try {
            client.initialize();
            McpSchema.CallToolResult r =
                    client.callTool(new McpSchema.CallToolRequest("read_file", Map.of("path", BRANCH + ".txt")));
            String text = ((McpSchema.TextContent) r.content().get(0)).text();
            assertTrue(r.isError(), text);
            assertEquals("path", ((Map<?, ?>) r.structuredContent()).get("argument"), text);
            assertTrue(text.contains("UTF-8 locale such as C.UTF-8"), text);
            assertFalse(text.contains("agent notes"), text);
        } finally {
            client.closeGracefully();
        }
    }

    private String fence() {
        return "'" + git.launcher() + "'";
    }

    private record Outcome(int exit, String out, String err) {
        String all() {
            return "exit " + exit + "\n" + out + err;
        }
    }

    /** Runs {@code script} with bash, from a file of UTF-8 bytes, in the fixture's git environment. */
    private Outcome sh(String script) throws Exception {
        Path file = Files.createTempFile(tmp, "step", ".sh");
        Files.write(file, script.getBytes(StandardCharsets.UTF_8));
        ProcessBuilder pb = new ProcessBuilder(List.of("bash", file.toString())).directory(tmp.toFile());
        pb.environment().clear();
        pb.environment().putAll(git.env());
        Path out = tmp.resolve("out");
        Path err = tmp.resolve("err");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        p.getOutputStream().close();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the step finished");
        return new Outcome(
                p.exitValue(),
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }
}
