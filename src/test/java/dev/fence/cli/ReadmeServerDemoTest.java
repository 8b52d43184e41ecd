package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.ProcessTest;
import dev.fence.testing.RedisServer;
import dev.fence.testing.TestLauncher;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README's server section, run as printed: {@code fence serve} started with the command README shows
 * (its store swapped for a private redis-server, its port for a free one, its credentials file for one
 * here), an admin credential added with {@code fence serve credentials add}, and then README's {@code
 * fence demo --server URL}, which must see every expected outcome.
 */
@ProcessTest
class ReadmeServerDemoTest {
    @TempDir
    Path tmp;

    /** The first line of README.md that starts with {@code prefix}, split into words. */
    private static List<String> readmeLine(String prefix) throws IOException {
        for (String line : Files.readAllLines(Path.of("README.md"))) {
            if (line.startsWith(prefix)) {
                return new ArrayList<>(Arrays.asList(line.trim().split("\\s+")));
            }
        }
        throw new AssertionError("README.md has no line starting with '" + prefix + "'");
    }

    private static void replaceValue(List<String> words, String option, String value) {
        int i = words.indexOf(option);
        assertTrue(i > 0 && i + 1 < words.size(), "README's command has no " + option + ": " + words);
        words.set(i + 1, value);
    }

    private static String valueOf(List<String> words, String option) {
        return words.get(words.indexOf(option) + 1);
    }

    @Test
    void theDemoPassesAgainstAServerStartedAsReadmeShowsIt() throws Exception {
        List<String> serve = readmeLine("fence serve --listen ");
        List<String> demo = readmeLine("fence demo --server http");
        String listen = valueOf(serve, "--listen");
        String shownUrl = valueOf(demo, "--server");
        assertEquals("http://" + listen, shownUrl, "README's demo line asks the server README starts");
        assertTrue(valueOf(serve, "--store").startsWith("redis://"), serve.toString());

        Path launcher = TestLauncher.write(tmp.resolve("bin/fence"));
        Path credentials = tmp.resolve("credentials");
        Map<String, String> env = Map.of("HOME", tmp.toString(), "PATH", System.getenv("PATH"));
        Run added = run(
                env,
                launcher,
                "serve",
                "credentials",
                "add",
                "--name",
                "ops",
                "--role",
                "admin",
                "--file",
                credentials.toString());
        assertEquals(0, added.exit(), added.err());
        String admin = added.out().strip();

        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (RedisServer redis = RedisServer.start()) {
            replaceValue(serve, "--listen", listen.substring(0, listen.lastIndexOf(':') + 1) + port);
            replaceValue(serve, "--store", redis.url() + "/0");
            replaceValue(serve, "--credentials", credentials.toString());
            serve.set(0, launcher.toString());
            Path out = tmp.resolve("serve.out");
            Path err = tmp.resolve("serve.err");
            ProcessBuilder pb =
                    new ProcessBuilder(serve).redirectOutput(out.toFile()).redirectError(err.toFile());
            pb.environment().clear();
            pb.environment().putAll(env);
            Process server = pb.start();
            try {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (!Files.readString(out).contains("listening on")) {
                    assertTrue(server.isAlive(), "fence serve exited: " + Files.readString(err));
                    assertTrue(System.nanoTime() < deadline, "fence serve did not start: " + Files.readString(err));
                    Thread.sleep(50);
                }
                String url = Files.readString(out).strip().substring("listening on ".length());
                assertEquals(shownUrl.replace(":" + listen.substring(listen.lastIndexOf(':') + 1), ":" + port), url);

                replaceValue(demo, "--server", url);
                demo.set(0, launcher.toString());
                demo.add("--progress");
                demo.add("never");
                Map<String, String> demoEnv = new java.util.HashMap<>(env);
                demoEnv.put("FENCE_CREDENTIAL", admin);
                Run r = run(demoEnv, demo.toArray(String[]::new));
                assertEquals(0, r.exit(), r.out() + r.err() + "\nserver:\n" + Files.readString(err));
                assertTrue(r.out().contains("Result: all "), r.out());
                assertTrue(r.out().contains("one admin credential"), r.out());
            } finally {
                server.destroy();
                server.waitFor(20, TimeUnit.SECONDS);
            }
        }
    }

    private record Run(int exit, String out, String err) {}

    private Run run(Map<String, String> env, Path launcher, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(launcher.toString());
        command.addAll(List.of(args));
        return run(env, command.toArray(String[]::new));
    }

    private Run run(Map<String, String> env, String... command) throws Exception {
        Path out = Files.createTempFile(tmp, "out", ".txt");
        Path err = Files.createTempFile(tmp, "err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        assertTrue(p.waitFor(180, TimeUnit.SECONDS), "timed out: " + String.join(" ", command));
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }
}
