package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fence.testing.GitProcess;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.Processes;
import dev.fence.testing.Processes.Run;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release archive {@code mvn package} builds, used as README's install section does: unpacked into a
 * directory of its own, away from any source tree, it runs, installs a hook that admits and fences real
 * pushes, carries man pages groff reads cleanly and a completion bash loads, and its systemd unit's
 * command line starts {@code fence serve} on its example configuration.
 */
@ProcessTest
class ReleaseArchiveIT {
    @TempDir
    Path tmp;

    Path home;
    Map<String, String> env;

    @BeforeEach
    void unpack() throws Exception {
        Path archive;
        try (Stream<Path> files =
                Files.list(Path.of(System.getProperty("fence.jar")).getParent())) {
            archive = files.filter(f -> f.getFileName().toString().matches("fence-.+\\.tar\\.gz"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no target/fence-<version>.tar.gz: run mvn package"));
        }
        env = new HashMap<>(GitProcess.cleanEnv(tmp.resolve("user")));
        Path opt = Files.createDirectories(tmp.resolve("opt"));
        Run untar = run(List.of("tar", "-xzf", archive.toString(), "-C", opt.toString()), opt);
        assertEquals(0, untar.exit(), untar.err());
        try (Stream<Path> top = Files.list(opt)) {
            home = top.findFirst().orElseThrow();
        }
        assertEquals(
                archive.getFileName().toString().replace(".tar.gz", ""),
                home.getFileName().toString());
        for (String expected : List.of(
                "bin/fence",
                "lib/fence.jar",
                "hooks/pre-receive",
                "hooks/pre-receive-curl.sh",
                "share/man/man1/fence.1",
                "share/man/man1/fence-install.1",
                "share/bash-completion/completions/fence",
                "share/systemd/fence-serve.service",
                "etc/fence.conf.example")) {
            assertTrue(Files.isRegularFile(home.resolve(expected)), "the archive lacks " + expected);
        }
        assertTrue(Files.isExecutable(home.resolve("bin/fence")));
        assertTrue(Files.isExecutable(home.resolve("hooks/pre-receive-curl.sh")));
    }

    private Run run(List<String> command, Path dir) throws Exception {
        return Processes.run(command, env, dir);
    }

    /** {@code bin/fence args…} of the unpacked archive, run from a directory with no sources in sight. */
    private Run fence(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(home.resolve("bin/fence").toString()));
        command.addAll(List.of(args));
        return run(command, tmp);
    }

    @Test
    void theUnpackedArchiveRunsAndInstallsAHookThatJudgesRealPushes() throws Exception {
        Run version = fence("--version");
        assertEquals(0, version.exit(), version.err());
        assertTrue(
                version.out()
                        .startsWith("fence " + home.getFileName().toString().substring("fence-".length())),
                version.out());

        Path repo = tmp.resolve("app.git");
        GitProcess.run(tmp, env, "init", "-q", "--bare", "-b", "main", repo.toString());
        String store = "sqlite:" + tmp.resolve("fence.db");
        Run installed = fence("install", "--bare", repo.toString(), "--store", store);
        assertEquals(0, installed.exit(), installed.err());
        assertFalse(installed.out().contains("warning:"), installed.out());
        String hook = Files.readString(repo.resolve("hooks/pre-receive"));
        assertTrue(hook.contains(home.resolve("lib/fence.jar").toString()), "the hook runs the archive's jar");

        Path work = tmp.resolve("work");
        GitProcess.run(tmp, env, "init", "-q", "-b", "main", work.toString());
        Run acquired = fence(
                "lease",
                "acquire",
                "--repo",
                "app",
                "--ref",
                "main",
                "--holder",
                "agent-a",
                "--store",
                store,
                "--json");
        assertEquals(0, acquired.exit(), acquired.err());
        JsonNode lease = new ObjectMapper().readTree(acquired.out());
        GitProcess.run(work, env, "commit", "-q", "--allow-empty", "-m", "one");
        GitProcess.Result admitted =
                push(work, repo, lease.get("token").asText(), lease.get("proof").asText());
        assertEquals(0, admitted.exit(), admitted.stderr());
        GitProcess.run(work, env, "commit", "-q", "--allow-empty", "-m", "two");
        GitProcess.Result fenced = push(
                work,
                repo,
                String.valueOf(lease.get("token").asLong() + 1),
                lease.get("proof").asText());
        assertNotEquals(0, fenced.exit(), "a token never granted was admitted");
        assertTrue(fenced.stderr().contains("FENCED"), fenced.stderr());
    }

    private GitProcess.Result push(Path work, Path repo, String token, String proof) {
        Map<String, String> pusher = new HashMap<>(env);
        pusher.put("USER", "agent-a");
        return GitProcess.runAllowingFailure(
                work,
                pusher,
                "push",
                "-q",
                "-o",
                "fence=" + token,
                "-o",
                "fence-proof=" + proof,
                repo.toString(),
                "HEAD:main");
    }

    @Test
    void itsManPagesReadCleanlyAndItsCompletionLoads() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/groff")), "no groff");
        List<Path> pages;
        try (Stream<Path> files = Files.list(home.resolve("share/man/man1"))) {
            pages = files.sorted().toList();
        }
        assertTrue(pages.size() > 20, "pages: " + pages);
        for (Path page : pages) {
            Run groff = run(List.of("/usr/bin/groff", "-man", "-Tutf8", "-ww", page.toString()), tmp);
            assertEquals(0, groff.exit(), page + ": " + groff.err());
            // Examples are kept on their lines (they are commands to copy): the one warning allowed.
            List<String> problems = groff.err()
                    .lines()
                    .filter(l -> !l.contains("can't break line"))
                    .toList();
            assertEquals(List.of(), problems, page.toString());
        }
        Run install = run(
                List.of(
                        "/usr/bin/groff",
                        "-man",
                        "-Tascii",
                        "-P-c",
                        "-P-b",
                        "-P-u",
                        home.resolve("share/man/man1/fence-install.1").toString()),
                tmp);
        assertTrue(install.out().contains("--credential-file=FILE"), install.out());
        assertTrue(install.out().contains("EXIT STATUS"), install.out());

        Run completion = run(
                List.of(
                        "/bin/bash",
                        "-c",
                        "source \"$0\" && complete -p fence",
                        home.resolve("share/bash-completion/completions/fence").toString()),
                tmp);
        assertEquals(0, completion.exit(), completion.err());
        assertTrue(completion.out().contains("fence"), completion.out());
    }

    /**
     * The unit's own command line and environment, with the paths it names moved under the test's directory:
     * {@code fence serve} starts on the archive's example configuration, answers {@code /healthz}, and stops
     * on SIGTERM as systemd stops it.
     */
    @Test
    void theSystemdUnitsCommandStartsFenceServeOnTheExampleConfiguration() throws Exception {
        String unit = Files.readString(home.resolve("share/systemd/fence-serve.service"));
        Map<String, String> unitEnv = new HashMap<>();
        String execStart = null;
        for (String line : unit.lines().toList()) {
            if (line.startsWith("Environment=")) {
                String kv = line.substring("Environment=".length());
                unitEnv.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
            } else if (line.startsWith("ExecStart=")) {
                execStart = line.substring("ExecStart=".length());
            }
        }
        assertTrue(execStart != null && execStart.startsWith("/opt/fence/bin/fence serve "), unit);
        Path etc = Files.createDirectories(tmp.resolve("etc/fence/serve"));
        Path state = Files.createDirectories(tmp.resolve("var/lib/fence"));
        Files.copy(home.resolve("etc/fence.conf.example"), etc.resolve("fence.conf"));
        Run credential = fence(
                "serve",
                "credentials",
                "add",
                "--name",
                "admin",
                "--role",
                "admin",
                "--file",
                etc.resolve("credentials").toString());
        assertEquals(0, credential.exit(), credential.err());
        unitEnv.put("FENCE_LISTEN", "127.0.0.1:0");
        unitEnv.replaceAll((k, v) -> v.replace("/var/lib/fence", state.toString()));
        String command = execStart.replace("/opt/fence", home.toString()).replace("/etc/fence/serve", etc.toString());
        Matcher variable = Pattern.compile("\\$\\{(\\w+)\\}").matcher(command);
        StringBuilder expanded = new StringBuilder();
        while (variable.find()) {
            variable.appendReplacement(expanded, Matcher.quoteReplacement(unitEnv.get(variable.group(1))));
        }
        variable.appendTail(expanded);

        ProcessBuilder pb = new ProcessBuilder(List.of(expanded.toString().split(" ")))
                .directory(state.toFile())
                .redirectOutput(tmp.resolve("serve.out").toFile())
                .redirectError(tmp.resolve("serve.err").toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.environment().putAll(unitEnv);
        Process serve = pb.start();
        try {
            String url = Processes.listeningOn(serve, tmp.resolve("serve.out"), tmp.resolve("serve.err"));
            HttpResponse<String> health = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(url + "/healthz"))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode(), health.body());
            assertTrue(Files.exists(state.resolve("fence.db")), "the store is the unit's FENCE_STORE");
        } finally {
            serve.destroy();
            assertTrue(serve.waitFor(30, TimeUnit.SECONDS), "fence serve did not stop on SIGTERM");
        }
        assertTrue(
                List.of(0, 143).contains(serve.exitValue()),
                "exit " + serve.exitValue() + ", which the unit's SuccessExitStatus does not count as a clean stop");
    }
}
