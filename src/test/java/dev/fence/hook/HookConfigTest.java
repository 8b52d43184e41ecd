package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.ConfigException;
import dev.fence.core.FencePolicy;
import dev.fence.core.FencePolicy.PusherRule;
import dev.fence.core.PusherPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HookConfigTest {
    private static final Path EXAMPLE = Path.of("gitlab-config/fence.conf.example");

    @TempDir
    Path tmp;

    private Path noSystemFile() {
        return tmp.resolve("no-such-system-file");
    }

    private HookConfig loadFile(String text) throws IOException {
        Path f = tmp.resolve("fence.conf");
        Files.writeString(f, text);
        return HookConfig.load(null, f, noSystemFile());
    }

    private String failure(String text) throws IOException {
        Path f = tmp.resolve("fence.conf");
        Files.writeString(f, text);
        return assertThrows(ConfigException.class, () -> HookConfig.load(null, f, noSystemFile()))
                .getMessage();
    }

    @Test
    void noFileGivesDefaults() {
        HookConfig c = HookConfig.load(tmp, null, noSystemFile());
        assertEquals(FencePolicy.defaults(), c.policy());
        assertEquals(Optional.empty(), c.store());
        assertEquals(Optional.empty(), c.server());
        assertEquals(Optional.empty(), c.repoId());
        assertEquals(Optional.empty(), c.file());
    }

    @Test
    void everyKey() throws IOException {
        HookConfig c = loadFile(
                """
                # a comment
                store = redis://:s3cret#x@redis.internal:6379/0
                server = https://fence.internal:8700
                fenced-refs = refs/heads/main, refs/heads/release/**
                pusher-policy.default = reject
                pusher-policy.ci-* = allow
                pusher-policy.release-manager = bump-force
                pusher-policy.* = bump
                agent-pushers = bot-*,agent-?
                on-store-down = reject
                store-timeout = 1500ms
                repo-id = team/app
                """);
        FencePolicy p = c.policy();
        assertEquals(List.of("refs/heads/main", "refs/heads/release/**"), p.fencedRefs());
        assertEquals(
                List.of(
                        new PusherRule("ci-*", PusherPolicy.ALLOW),
                        new PusherRule("release-manager", PusherPolicy.BUMP_FORCE),
                        new PusherRule("*", PusherPolicy.BUMP)),
                p.pusherPolicies());
        assertEquals(PusherPolicy.REJECT, p.defaultPolicy());
        assertEquals(List.of("bot-*", "agent-?"), p.agentPatterns());
        assertFalse(p.acceptUnfencedWhenStoreDown());
        assertEquals(Duration.ofMillis(1500), p.storeTimeout());
        assertEquals(Optional.of("redis://:s3cret#x@redis.internal:6379/0"), c.store());
        assertEquals(Optional.of("https://fence.internal:8700"), c.server());
        assertEquals(Optional.of("team/app"), c.repoId());
        assertEquals(Optional.of(tmp.resolve("fence.conf")), c.file());
        assertEquals(PusherPolicy.ALLOW, p.policyFor("ci-nightly"));
        assertEquals(PusherPolicy.BUMP, p.policyFor("alice"));
        assertTrue(p.isAgent("bot-7"));
    }

    @Test
    void emptyAgentPushersMeansNone() throws IOException {
        assertEquals(List.of(), loadFile("agent-pushers =\n").policy().agentPatterns());
    }

    @Test
    void commentsBlankLinesAndCrlf() throws IOException {
        HookConfig c = loadFile("\r\n  # indented comment\r\n\r\nstore-timeout = 3s\r\n");
        assertEquals(Duration.ofSeconds(3), c.policy().storeTimeout());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            textBlock =
                    """
            stor = redis://x                     | fence.conf:1: stor: unknown key
            pusher-policy. = bump                | fence.conf:1: pusher-policy.: unknown key
            just some words                      | fence.conf:1: expected 'key = value'
            = value                              | fence.conf:1: missing key before '='
            store = redis-host:6379 and more     | fence.conf:1: store: URL contains a space
            store = ://nohost                    | fence.conf:1: store: not a valid URL
            store = localhost                    | fence.conf:1: store: not a URL: it has no scheme
            store =                              | fence.conf:1: store: must not be empty
            server = redis://x:1                 | fence.conf:1: server: must be an http:// or https:// URL
            server = http:///path                | fence.conf:1: server: an http(s) URL needs a host
            fenced-refs = main                   | fence.conf:1: fenced-refs: pattern 'main' does not start with refs/
            fenced-refs = refs/heads/a,,refs/x   | fence.conf:1: fenced-refs: empty pattern
            fenced-refs =                        | fence.conf:1: fenced-refs: needs at least one pattern
            pusher-policy.default = bumpy        | fence.conf:1: pusher-policy.default: unknown pusher policy 'bumpy'
            pusher-policy.ci-* = yes             | fence.conf:1: pusher-policy.ci-*: unknown pusher policy 'yes'
            agent-pushers = bot-*,,x             | fence.conf:1: agent-pushers: empty pattern
            on-store-down = open                 | fence.conf:1: on-store-down: 'open' is not accept or reject
            store-timeout = 5s                   | fence.conf:1: store-timeout: 5s is longer than the 4s maximum
            store-timeout = 1m                   | fence.conf:1: store-timeout: 1m is longer than the 4s maximum
            store-timeout = 2 seconds            | fence.conf:1: store-timeout: duration must be a positive whole number
            store-timeout = 0s                   | fence.conf:1: store-timeout: duration must be greater than zero
            repo-id = a\tb                       | fence.conf:1: repo-id: repo id contains a control character
            """)
    void badLinesNameFileLineAndKey(String line, String expectedStart) throws IOException {
        String m = failure(line.replace("\\t", "\t") + "\n");
        String expected = tmp + "/" + expectedStart.strip();
        assertTrue(m.startsWith(expected), "expected to start with <" + expected + "> but was <" + m + ">");
        HookInputParserTest.assertNoControlCharacters(m);
    }

    @Test
    void agentPatternWithSpaceIsRejected() throws IOException {
        assertTrue(failure("agent-pushers = bot *\n").contains("agent-pushers: pattern 'bot *' contains whitespace"));
    }

    @Test
    void duplicateKeyNamesBothLines() throws IOException {
        String m = failure("store-timeout = 1s\n\nstore-timeout = 2s\n");
        assertTrue(m.endsWith("fence.conf:3: store-timeout: given twice (first on line 1); give each key once"), m);
    }

    @Test
    void storeUrlIsNeverEchoed() throws IOException {
        for (String bad : List.of("redis //:hunter2@h", "hunter2@nohost", "redis://:hunter2@h:1/ x")) {
            String m = failure("store = " + bad + "\n");
            assertFalse(m.contains("hunter2"), m);
        }
        assertFalse(failure("server = ftp://u:hunter2@h\n").contains("hunter2"));
    }

    @Test
    void nonUtf8FileIsRejected() throws IOException {
        Path f = tmp.resolve("fence.conf");
        Files.write(f, new byte[] {'s', 't', 'o', 'r', 'e', '=', (byte) 0xff, '\n'});
        var e = assertThrows(ConfigException.class, () -> HookConfig.load(null, f, noSystemFile()));
        assertTrue(e.getMessage().contains("not valid UTF-8"), e.getMessage());
    }

    @Test
    void onlyWellFormedUtf8IsRead() throws IOException {
        // As a strict decoder reads it: an overlong form, an encoded surrogate, a cut sequence and a lone
        // continuation byte are refused; a replacement character written as such is text like any other.
        Path f = tmp.resolve("fence.conf");
        for (byte[] bad : List.of(
                new byte[] {(byte) 0xc0, (byte) 0xaf},
                new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
                new byte[] {(byte) 0xe2, (byte) 0x82},
                new byte[] {(byte) 0x80})) {
            byte[] text = new byte[bad.length + 3];
            text[0] = '#';
            System.arraycopy(bad, 0, text, 1, bad.length);
            text[bad.length + 1] = '\n';
            text[bad.length + 2] = '\n';
            Files.write(f, text);
            var e = assertThrows(ConfigException.class, () -> HookConfig.load(null, f, noSystemFile()));
            assertTrue(e.getMessage().contains("not valid UTF-8"), e.getMessage());
        }
        Files.writeString(f, "# caf\u00e9 \ufffd\nstore = sqlite:/tmp/x.db\n", java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(
                Optional.of("sqlite:/tmp/x.db"),
                HookConfig.load(null, f, noSystemFile()).store());
    }

    @Test
    void configOptionMustExist() {
        var e = assertThrows(
                ConfigException.class, () -> HookConfig.load(tmp, tmp.resolve("missing.conf"), noSystemFile()));
        assertTrue(e.getMessage().startsWith("--config: configuration file"), e.getMessage());
    }

    @Test
    void unreadableFileIsAConfigError() throws IOException {
        Path dir = Files.createDirectory(tmp.resolve("a-directory.conf"));
        var e = assertThrows(ConfigException.class, () -> HookConfig.load(tmp, dir, noSystemFile()));
        assertTrue(e.getMessage().contains("does not exist or is not a file"), e.getMessage());
    }

    @Test
    void fileLookupOrder() throws IOException {
        Path option = Files.writeString(tmp.resolve("option.conf"), "store-timeout = 1s\n");
        Path gitDir = Files.createDirectory(tmp.resolve("repo.git"));
        Path repoFile = Files.writeString(gitDir.resolve("fence.conf"), "store-timeout = 3s\n");
        Path system = Files.writeString(tmp.resolve("system.conf"), "store-timeout = 4s\n");

        assertEquals(
                Optional.of(option), HookConfig.load(gitDir, option, system).file());
        assertEquals(
                Optional.of(repoFile), HookConfig.load(gitDir, null, system).file());
        Files.delete(repoFile);
        HookConfig fromSystem = HookConfig.load(gitDir, null, system);
        assertEquals(Optional.of(system), fromSystem.file());
        assertEquals(Duration.ofSeconds(4), fromSystem.policy().storeTimeout());
        assertEquals(
                Optional.empty(), HookConfig.load(gitDir, null, noSystemFile()).file());
    }

    @Test
    void requireStoreExplainsWhereToSetIt() {
        var e = assertThrows(ConfigException.class, () -> HookConfig.load(null, null, noSystemFile())
                .requireStore());
        assertTrue(e.getMessage().startsWith("store: no store URL configured"), e.getMessage());
        assertTrue(e.getMessage().contains("--store"), e.getMessage());
    }

    @Test
    void gitIsTheOneOnPathOrAnAbsolutePath() throws IOException {
        assertEquals("git", loadFile("store-timeout = 1s\n").git());
        assertEquals("/usr/bin/git", loadFile("git = /usr/bin/git\n").git());
        assertTrue(failure("git = bin/git\n").contains("neither an absolute path nor 'git'"));
    }

    @Test
    void pusherVariablesAreNamesInOrderFromTheFileOnly() throws IOException {
        assertEquals(
                List.of("GL_USER", "REMOTE_USER", "USER", "LOGNAME"),
                HookConfig.load(tmp, null, noSystemFile()).pusherVariables(),
                "gitolite's GL_USER before the shared account's USER");
        assertEquals(
                List.of("SSH_PUSHER", "USER"),
                loadFile("pusher-variables = SSH_PUSHER, USER\n").pusherVariables());
        assertTrue(failure("pusher-variables =\n").contains("is not an environment variable name"));
        assertTrue(failure("pusher-variables = GL_USER,,USER\n").contains("is not an environment variable name"));
        assertTrue(failure("pusher-variables = GL USER\n").contains("'GL USER' is not an environment variable"));
        assertTrue(failure("pusher-variables = $GL_USER\n").contains("is not an environment variable"));
        assertTrue(failure("pusher-variables = USER, USER\n").contains("USER is named twice"));
    }

    @Test
    void exampleFileParsesToTheDefaults() {
        HookConfig c = HookConfig.load(null, EXAMPLE, noSystemFile());
        assertEquals(FencePolicy.defaults(), c.policy());
    }

    @Test
    void everyCommentedSettingInTheExampleIsValid() throws IOException {
        Pattern setting = Pattern.compile("^# ([a-z][a-z.*?-]*) = (.*)$");
        List<String> tried = new ArrayList<>();
        for (String line : Files.readAllLines(EXAMPLE)) {
            Matcher m = setting.matcher(line);
            if (m.matches()) {
                loadFile(m.group(1) + " = " + m.group(2) + "\n");
                tried.add(m.group(1));
            }
        }
        assertTrue(
                tried.containsAll(List.of("store", "server", "agent-pushers", "repo-id", "pusher-variables")),
                tried.toString());
    }

    @Test
    void exampleDocumentsEveryKeyAndNoVariable() throws IOException {
        String text = Files.readString(EXAMPLE);
        for (String key : HookConfig.KEYS) {
            assertTrue(text.contains("\n# " + key + ":") || text.contains("\n" + key + " = "), key);
        }
        assertFalse(text.contains("(env: "), "no key is read from the environment");
        assertTrue(text.contains("pusher-policy.<glob>"));
    }
}
