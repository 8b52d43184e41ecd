package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.GitProcess;
import dev.fence.testing.ProcessTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Installs the hooks with {@code fence install --bare} into a real bare repository, with a stand-in
 * launcher that records how it was called, and pushes to it with the real git.
 */
@ProcessTest
class InstalledHookPushTest {
    @TempDir
    Path tmp;

    Map<String, String> env;
    Path bare;
    Path work;
    Path log;
    Path launcher;

    @BeforeEach
    void setUp() throws IOException {
        env = GitProcess.cleanEnv(tmp);
        bare = tmp.resolve("app.git");
        work = tmp.resolve("work");
        log = tmp.resolve("launcher.log");
        launcher = tmp.resolve("fake fence/bin/fence");
        Files.createDirectories(launcher.getParent());
        Files.writeString(
                launcher,
                """
                #!/bin/sh
                log='%s'
                echo "args: $*" >> "$log"
                env | grep '^GIT_PUSH_OPTION' | sort >> "$log"
                sed 's/^/stdin: /' >> "$log"
                if [ "$2" = pre-receive ] && [ -f "$log.reject" ]; then
                  echo "FENCED resource=git:app:refs/heads/main ref=refs/heads/main token=5 current=6 reason=superseded" >&2
                  exit 1
                fi
                [ "$2" = post-receive ] && exit 3
                exit 0
                """
                        .formatted(log));
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
        GitProcess.run(tmp, env, "init", "--bare", "-q", bare.toString());
        GitProcess.run(tmp, env, "init", "-q", "-b", "main", work.toString());
        Files.writeString(work.resolve("a.txt"), "one\n");
        GitProcess.run(work, env, "add", "a.txt");
        GitProcess.run(work, env, "commit", "-q", "-m", "one");
        GitProcess.run(work, env, "remote", "add", "origin", bare.toString());
    }

    @Test
    void pushOptionsAndStdinReachTheLauncherAndPostReceiveNeverFails() throws IOException {
        var installed = TestRootCommand.run(
                env, "install", "--bare", bare.toString(), "--launcher", launcher.toString(), "--record-landed");
        assertEquals(0, installed.exit(), installed.err());

        var push = GitProcess.runAllowingFailure(work, env, "push", "-o", "fence=5", "-o", "ci.skip", "origin", "main");
        assertEquals(0, push.exit(), push.stderr());
        String head = GitProcess.run(work, env, "rev-parse", "HEAD");
        String text = Files.readString(log);
        assertTrue(text.contains("args: hook pre-receive\n"), text);
        assertTrue(
                text.contains("GIT_PUSH_OPTION_0=fence=5\nGIT_PUSH_OPTION_1=ci.skip\nGIT_PUSH_OPTION_COUNT=2\n"), text);
        assertTrue(text.contains("stdin: " + "0".repeat(40) + " " + head + " refs/heads/main\n"), text);
        assertTrue(text.contains("args: hook post-receive\n"), text);
        assertTrue(push.stderr().contains("fence: could not record this push in the ledger (exit 3)"), push.stderr());
        assertEquals(head, GitProcess.run(bare, env, "rev-parse", "refs/heads/main"));
    }

    @Test
    void aRejectingLauncherRejectsThePush() throws IOException {
        assertEquals(
                0,
                TestRootCommand.run(
                                env,
                                "install",
                                "--bare",
                                bare.toString(),
                                "--launcher",
                                launcher.toString(),
                                "--record-landed")
                        .exit());
        GitProcess.run(work, env, "push", "-q", "origin", "main");
        String before = GitProcess.run(bare, env, "rev-parse", "refs/heads/main");

        Files.writeString(work.resolve("a.txt"), "two\n");
        GitProcess.run(work, env, "commit", "-q", "-am", "two");
        Files.writeString(Path.of(log + ".reject"), "");
        var push = GitProcess.runAllowingFailure(work, env, "push", "-o", "fence=5", "origin", "main");
        assertNotEquals(0, push.exit());
        assertTrue(push.stderr().contains("FENCED resource=git:app:refs/heads/main"), push.stderr());
        assertTrue(push.stderr().contains("pre-receive hook declined"), push.stderr());
        assertEquals(before, GitProcess.run(bare, env, "rev-parse", "refs/heads/main"));
    }

    @Test
    void giteaDispatcherRunsTheInstalledHook() throws IOException {
        Path hooks = bare.resolve("hooks");
        for (String hook : new String[] {"pre-receive", "post-receive"}) {
            Files.writeString(hooks.resolve(hook), InstallCommandTest.fakeGiteaDispatcher());
            Files.setPosixFilePermissions(hooks.resolve(hook), PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.createDirectories(hooks.resolve(hook + ".d"));
        }
        assertEquals(
                0,
                TestRootCommand.run(
                                env,
                                "install",
                                "--bare",
                                bare.toString(),
                                "--launcher",
                                launcher.toString(),
                                "--record-landed")
                        .exit());
        var push = GitProcess.runAllowingFailure(work, env, "push", "-o", "fence=9", "origin", "main");
        assertEquals(0, push.exit(), push.stderr());
        String text = Files.readString(log);
        assertTrue(text.contains("args: hook pre-receive\n"), text);
        assertTrue(text.contains("GIT_PUSH_OPTION_0=fence=9\n"), text);
        assertTrue(text.contains(" refs/heads/main\n"), text);
    }
}
