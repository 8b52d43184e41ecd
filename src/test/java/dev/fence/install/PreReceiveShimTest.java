package dev.fence.install;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.fence.testing.ProcessTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's {@code hooks/pre-receive}, the shim a host copies into place: which fence it starts,
 * with which arguments, and that it refuses the push when it finds none. Stand-ins for the launcher and
 * for java record how they were called.
 */
@ProcessTest
class PreReceiveShimTest {
    private static final Path SHIM = Path.of("hooks/pre-receive").toAbsolutePath();

    @TempDir
    Path tmp;

    Path log;
    Map<String, String> env;

    @BeforeEach
    void setUp() {
        log = tmp.resolve("calls.log");
        env = new HashMap<>(Map.of("PATH", "/usr/bin:/bin", "HOME", tmp.toString()));
    }

    private Path recorder(String name) throws IOException {
        Path p = tmp.resolve("bin").resolve(name);
        Files.createDirectories(p.getParent());
        Files.writeString(
                p,
                """
                #!/bin/sh
                echo "%s $*" >> '%s'
                sed 's/^/stdin: /' >> '%s'
                exit 7
                """
                        .formatted(name, log, log));
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    private record Run(int exit, String stderr) {}

    private Run runShim(String stdin) throws IOException, InterruptedException {
        // From a file, as a hook that exits without reading its input must not break the test.
        Path input = Files.writeString(tmp.resolve("stdin"), stdin);
        ProcessBuilder pb = new ProcessBuilder(SHIM.toString())
                .directory(tmp.toFile())
                .redirectInput(input.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("hooks/pre-receive did not finish");
        }
        return new Run(p.exitValue(), new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    private String calls() throws IOException {
        return Files.exists(log) ? Files.readString(log) : "";
    }

    @Test
    void isAnExecutableShellScriptThatFenceInstallRecognises() throws IOException {
        assertTrue(Files.isExecutable(SHIM), SHIM + " must be executable");
        String text = Files.readString(SHIM);
        assertTrue(text.startsWith("#!/bin/sh\n"), text);
        assertTrue(HookScripts.isOurs(text.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void launcherWinsAndGetsStdinAndItsExitStatusIsTheHooks() throws Exception {
        Path launcher = recorder("fence-launcher");
        env.put("FENCE_LAUNCHER", launcher.toString());
        env.put("FENCE_JAR", tmp.resolve("ignored.jar").toString());
        Run r = runShim("0000 1111 refs/heads/main\n");
        assertEquals(7, r.exit(), r.stderr());
        assertEquals("fence-launcher hook pre-receive\nstdin: 0000 1111 refs/heads/main\n", calls());
    }

    @Test
    void jarRunsWithTheJavaOverride() throws Exception {
        Path java = recorder("java");
        env.put("FENCE_JAR", "/srv/fence/fence.jar");
        env.put("JAVA", java.toString());
        Run r = runShim("a b refs/heads/x\n");
        assertEquals(7, r.exit(), r.stderr());
        // The shipped script starts the JVM with the options fence install writes into the hooks it makes.
        assertEquals(
                "java " + String.join(" ", Launch.HOOK_JVM_OPTIONS) + " -jar /srv/fence/fence.jar hook pre-receive\n"
                        + "stdin: a b refs/heads/x\n",
                calls());
    }

    @Test
    void jarRunsWithJavaHomeWhenJavaIsNotSet() throws Exception {
        Path home = tmp.resolve("jdk");
        Files.createDirectories(home.resolve("bin"));
        Path java = recorder("java");
        Files.move(java, home.resolve("bin/java"));
        env.put("FENCE_JAR", "/srv/fence/fence.jar");
        env.put("JAVA_HOME", home.toString());
        assertEquals(7, runShim("").exit());
        assertTrue(calls().startsWith("java " + String.join(" ", Launch.HOOK_JVM_OPTIONS) + " -jar "), calls());
    }

    @Test
    void fenceOnPathIsTheLastResort() throws Exception {
        assumeFalse(Files.exists(Path.of(HookScripts.DEFAULT_JAR)), "a real fence.jar is installed here");
        Path fence = recorder("fence");
        env.put("PATH", fence.getParent() + ":/usr/bin:/bin");
        assertEquals(7, runShim("").exit());
        assertEquals("fence hook pre-receive\n", calls());
    }

    @Test
    void refusesThePushWhenNoFenceIsFound() throws Exception {
        assumeFalse(Files.exists(Path.of(HookScripts.DEFAULT_JAR)), "a real fence.jar is installed here");
        Run r = runShim("a b refs/heads/main\n");
        assertEquals(1, r.exit());
        assertTrue(r.stderr().contains("fence: pre-receive cannot find fence"), r.stderr());
    }
}
