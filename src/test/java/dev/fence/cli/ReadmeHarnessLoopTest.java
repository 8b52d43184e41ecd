package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.core.EventType;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import dev.fence.testing.FenceCli;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/**
 * README's "For harness authors" shell block, run verbatim with bash against a bare repository with
 * fence's installed hook on a SQLite store: the loop a harness author copies must work as printed. The
 * agent's tool calls ({@code ./scripts/agent-step.sh}, {@code ./scripts/migrate.sh}) are the only
 * stand-ins: the first commits a change, the second notes the token it ran under.
 */
@ProcessTest
class ReadmeHarnessLoopTest {
    private static final String MAIN = "refs/heads/main";

    @TempDir
    Path tmp;

    @Test
    void theHarnessBlockRunsAsPrinted() throws Exception {
        String block = harnessBlock(Files.readString(Path.of("README.md")));
        if (!Files.isExecutable(Path.of("/usr/bin/jq")) && !Files.isExecutable(Path.of("/bin/jq"))) {
            throw new TestAbortedException("skipped: README's harness block uses jq (apt-get install jq)");
        }
        GitFixture git = new GitFixture(tmp);
        Path home = tmp.resolve("home");
        String store = "sqlite:" + tmp.resolve("fence.db");
        Path bare = git.bareWithMain("app");
        FenceCli fence = new FenceCli(git.env(Map.of("FENCE_STORE", store)), new FakeClock(Instant.now()));
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
        Path clone = git.clone(bare, "home/agent-a");
        script(
                clone.resolve("scripts/agent-step.sh"),
                "echo \"step under token $FENCE_TOKEN\" >> notes.txt",
                "git add notes.txt",
                "git commit -q -m 'agent-a: a step'");
        script(clone.resolve("scripts/migrate.sh"), "echo \"$FENCE_RESOURCE $FENCE_TOKEN\" > \"$HOME/migrated\"");

        Map<String, String> env = new HashMap<>(git.env(Map.of("FENCE_STORE", store)));
        env.put("PATH", git.launcher().getParent() + ":/usr/bin:/bin");
        env.put("HOME", home.toString());
        ProcessBuilder pb = new ProcessBuilder("bash", "-euo", "pipefail", "-c", block).directory(home.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        Path out = tmp.resolve("block.out");
        pb.redirectErrorStream(true).redirectOutput(out.toFile());
        Process p = pb.start();
        p.getOutputStream().close();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("README's harness block did not finish in 5 minutes: " + Files.readString(out));
        }
        String printed = Files.readString(out);
        assertEquals(0, p.exitValue(), "README's harness block failed:\n" + block + "\n--- output\n" + printed);

        assertTrue(
                java.util.regex.Pattern.compile("renewed git:app:refs/heads/main for agent-a: token \\d+, expires \\S+"
                                + " \\(in (9|10)m\\)")
                        .matcher(printed)
                        .find(),
                "renew kept the grant's 10m TTL:\n" + printed);
        Path grantFile = home.resolve(".fence/app-main.grant");
        assertEquals(
                "rw-------",
                PosixFilePermissions.toString(Files.getPosixFilePermissions(grantFile)),
                "the grant file holds the proof");
        JsonNode grant = Json.read(Files.readString(grantFile));
        long token = grant.get("token").asLong();
        assertFalse(printed.contains(grant.get("proof").asText()), "nothing printed the proof:\n" + printed);
        assertEquals(git.head(clone), git.tip(bare, MAIN), "the agent's step landed");
        assertTrue(Files.readString(clone.resolve("notes.txt")).contains("token " + token), "exec ran under the grant");

        try (LeaseStore s = Stores.open(store, StoreOptions.defaults())) {
            String branch = "git:app:" + MAIN;
            assertEquals(1, events(s, branch, EventType.GRANT).size(), "the grant was never taken again");
            List<LedgerEvent> accepts = events(s, branch, EventType.ACCEPT);
            assertEquals(1, accepts.size(), accepts.toString());
            assertEquals(token, accepts.get(0).token(), "the hook admitted the push under the grant's token");
            assertEquals(1, events(s, branch, EventType.RELEASE).size(), "released under its own grant");
            List<LedgerEvent> migrations = events(s, "db/migrations", EventType.GRANT);
            assertEquals(1, migrations.size(), "exec used the grant from the environment");
            assertEquals(
                    "db/migrations " + migrations.get(0).token(),
                    Files.readString(home.resolve("migrated")).strip());
            assertEquals(1, events(s, "db/migrations", EventType.RELEASE).size());
        }
    }

    /** The first sh block of README's "For harness authors" section. */
    static String harnessBlock(String readme) {
        int section = readme.indexOf("\n## For harness authors\n");
        assertTrue(section >= 0, "README has no 'For harness authors' section");
        int next = readme.indexOf("\n## ", section + 1);
        String body = readme.substring(section, next < 0 ? readme.length() : next);
        int open = body.indexOf("\n```sh\n");
        assertTrue(open >= 0, "the harness section has no sh block");
        int close = body.indexOf("\n```", open + 7);
        return body.substring(open + 7, close + 1);
    }

    private static List<LedgerEvent> events(LeaseStore s, String resource, EventType type) {
        return s.query(new LedgerQuery(resource, null, null, null, null, Set.of(type), 0));
    }

    private static void script(Path file, String... lines) throws Exception {
        Files.createDirectories(file.getParent());
        Files.writeString(file, "#!/bin/sh\nset -e\n" + String.join("\n", lines) + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
