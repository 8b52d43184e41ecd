package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.install.HookScripts;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.Stdin;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code fence install --gitlab-global / --gitlab-tarball / --ghes}: the files written and the steps printed. */
@ProcessTest
class HostArtefactsInstallTest {
    private static final Map<String, String> ENV = Map.of("PATH", "/usr/bin:/bin");

    @TempDir
    Path tmp;

    private static String perms(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    /** Runs {@code command} with {@code stdin}; returns exit code, stdout and stderr. */
    static TestRootCommand.Run exec(String stdin, String... command) throws Exception {
        Process p = new ProcessBuilder(command).start();
        Stdin.feed(p, stdin);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return new TestRootCommand.Run(p.exitValue(), out, err);
    }

    @Test
    void gitlabGlobalWritesAnExecutableLauncherAndPrintsGitlabRb() throws Exception {
        Path dir = tmp.resolve("custom_hooks");
        var r = TestRootCommand.run(ENV, "install", "--gitlab-global", dir.toString());
        assertEquals(0, r.exit(), r.err());
        Path hook = dir.resolve("pre-receive.d/50-fence");
        assertEquals("rwxr-xr-x", perms(hook));
        String text = Files.readString(hook);
        assertTrue(text.startsWith("#!/bin/sh\n" + HookScripts.MARKER + "\n"), text);
        assertTrue(
                text.contains(
                        "exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:CompileThresholdScaling=10 -Xss1m -XX:-UsePerfData -Xshare:auto -jar"
                                + " /opt/fence/fence.jar hook pre-receive\n"),
                text);
        assertTrue(r.out().contains("gitaly['configuration'] = {"), r.out());
        assertTrue(r.out().contains("custom_hooks_dir: '" + dir + "',"), r.out());
        assertTrue(r.out().contains("gitlab-ctl reconfigure"), r.out());
        assertTrue(r.out().contains("every Gitaly node"), r.out());
        assertTrue(r.out().contains("Java 17+ runtime"), r.out());
        var again = TestRootCommand.run(ENV, "install", "--gitlab-global", dir.toString());
        assertTrue(again.out().contains("unchanged " + hook), again.out());
    }

    @Test
    void gitlabLauncherPassesArgumentsAndStdinToJava() throws Exception {
        Path fakeJava = tmp.resolve("bin/java");
        Files.createDirectories(fakeJava.getParent());
        Files.writeString(fakeJava, "#!/bin/sh\nfor a in \"$@\"; do echo \"arg: $a\"; done\nsed 's/^/stdin: /'\n");
        Files.setPosixFilePermissions(fakeJava, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path dir = tmp.resolve("hooks dir");
        var r = TestRootCommand.run(
                ENV,
                "install",
                "--gitlab-global",
                dir.toString(),
                "--java",
                fakeJava.toString(),
                "--jar",
                "/opt/my fence/fence.jar");
        assertEquals(0, r.exit(), r.err());
        var run = exec(
                "old new refs/heads/main\n",
                dir.resolve("pre-receive.d/50-fence").toString());
        assertEquals(0, run.exit(), run.err());
        assertEquals(
                "arg: -XX:+UseSerialGC\narg: -XX:TieredStopAtLevel=1\narg: -XX:CICompilerCount=1\narg: -XX:CompileThresholdScaling=10\narg: -Xss1m\narg: -XX:-UsePerfData\narg: -Xshare:auto\narg: -jar\n"
                        + "arg: /opt/my fence/fence.jar\narg: hook\narg: pre-receive\nstdin: old new refs/heads/main\n",
                run.out());
    }

    @Test
    void gitlabGlobalRefusesAForeign50Fence() throws IOException {
        Path hook = tmp.resolve("pre-receive.d/50-fence");
        Files.createDirectories(hook.getParent());
        Files.writeString(hook, "#!/bin/sh\nexit 0\n");
        var r = TestRootCommand.run(ENV, "install", "--gitlab-global", tmp.toString());
        assertEquals(6, r.exit());
        assertTrue(r.err().contains(hook.toString()), r.err());
        assertEquals("#!/bin/sh\nexit 0\n", Files.readString(hook));
    }

    @Test
    void gitlabTarballHoldsCustomHooksAndPrintsGitalyHooksSet() throws Exception {
        Path tar = tmp.resolve("custom_hooks.tar");
        var r = TestRootCommand.run(ENV, "install", "--gitlab-tarball", tar.toString());
        assertEquals(0, r.exit(), r.err());
        var list = exec("", "/usr/bin/tar", "-tvf", tar.toString());
        assertEquals(0, list.exit(), list.err());
        assertEquals("", list.err(), "tar has no complaints");
        List<String> lines = list.out().lines().toList();
        assertEquals(3, lines.size(), list.out());
        assertTrue(lines.get(0).startsWith("drwxr-xr-x") && lines.get(0).endsWith(" custom_hooks/"), list.out());
        assertTrue(lines.get(1).startsWith("drwxr-xr-x") && lines.get(1).endsWith(" custom_hooks/pre-receive.d/"));
        assertTrue(
                lines.get(2).startsWith("-rwxr-xr-x") && lines.get(2).endsWith(" custom_hooks/pre-receive.d/50-fence"));

        Path out = Files.createDirectory(tmp.resolve("extracted"));
        assertEquals(
                0,
                exec("", "/usr/bin/tar", "-xf", tar.toString(), "-C", out.toString())
                        .exit());
        Path hook = out.resolve("custom_hooks/pre-receive.d/50-fence");
        assertEquals("rwxr-xr-x", perms(hook));
        assertTrue(Files.readString(hook).contains("-jar /opt/fence/fence.jar hook pre-receive"));

        assertTrue(
                r.out()
                        .contains(
                                "cat " + tar + " | sudo -u git -- /opt/gitlab/embedded/bin/gitaly hooks set"
                                        + " --storage <storage> --repository <relative path> --config /var/opt/gitlab/gitaly/config.toml"),
                r.out());
        assertTrue(r.out().contains("Praefect"), r.out());

        byte[] first = Files.readAllBytes(tar);
        var again = TestRootCommand.run(ENV, "install", "--gitlab-tarball", tar.toString());
        assertEquals(0, again.exit());
        assertTrue(again.out().contains("unchanged " + tar), again.out());
        assertTrue(java.util.Arrays.equals(first, Files.readAllBytes(tar)), "reproducible");
    }

    @Test
    void gitlabTarballRefusesToOverwriteSomethingElse() throws IOException {
        Path tar = Files.writeString(tmp.resolve("important.tar"), "not ours");
        assertEquals(
                6,
                TestRootCommand.run(ENV, "install", "--gitlab-tarball", tar.toString())
                        .exit());
        assertEquals("not ours", Files.readString(tar));
        assertEquals(
                0,
                TestRootCommand.run(ENV, "install", "--gitlab-tarball", tar.toString(), "--force")
                        .exit());
        assertEquals("not ours", Files.readString(tmp.resolve("important.tar.fence-backup")));
        assertEquals(
                2,
                TestRootCommand.run(ENV, "install", "--gitlab-tarball", tmp.toString())
                        .exit());
    }

    @Test
    void ghesWritesScriptDockerfileAndConfig() throws Exception {
        Path dir = tmp.resolve("ghes");
        var r = TestRootCommand.run(ENV, "install", "--ghes", dir.toString(), "--store", "redis://:pw@redis:6379");
        assertEquals(0, r.exit(), r.err());

        Path script = dir.resolve("fence-pre-receive.sh");
        assertEquals("rwxr-xr-x", perms(script));
        String s = Files.readString(script);
        assertTrue(s.startsWith("#!/bin/bash\n" + HookScripts.MARKER + "\n"), s);
        assertTrue(
                s.contains(
                        "exec /usr/bin/java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:CompileThresholdScaling=10 -Xss1m -XX:-UsePerfData -Xshare:auto -jar"
                                + " /opt/fence/fence.jar hook pre-receive\n"),
                s);
        assertEquals(0, exec("", "/usr/bin/bash", "-n", script.toString()).exit());

        String docker = Files.readString(dir.resolve("Dockerfile.hook-env"));
        assertTrue(docker.contains("\nFROM --platform=linux/amd64 eclipse-temurin:17-jre-jammy\n"), docker);
        assertTrue(docker.contains("COPY fence.jar /opt/fence/fence.jar\n"), docker);
        assertTrue(docker.contains("COPY fence.conf /etc/fence/fence.conf\n"), docker);
        assertTrue(docker.contains("rm -f /etc/localtime /usr/share/zoneinfo/localtime"), docker);
        assertTrue(docker.contains("ln -sf /opt/java/openjdk/bin/java /usr/bin/java"), docker);
        assertTrue(docker.contains("docker export fence-hook-env | gzip > fence-hook-env.tar.gz"), docker);

        Path conf = dir.resolve("fence.conf");
        assertEquals("rw-------", perms(conf));
        assertTrue(Files.readString(conf).contains("\nstore = redis://:pw@redis:6379\n"));

        assertTrue(r.out().contains("ghe-hook-env-create fence"), r.out());
        assertTrue(r.out().contains("5 seconds"), r.out());
        assertTrue(r.out().contains("hook repository"), r.out());
        assertTrue(r.out().contains("docker build --platform linux/amd64"), r.out());
        assertFalse(r.out().contains(":pw@"), r.out());
    }

    @Test
    void ghesWithoutStoreWritesAPlaceholderOnceAndKeepsItAfterwards() throws IOException {
        Path dir = tmp.resolve("ghes");
        var first = TestRootCommand.run(ENV, "install", "--ghes", dir.toString());
        assertEquals(0, first.exit(), first.err());
        assertTrue(first.out().contains("warning: fence.conf has no store yet"), first.out());
        Path conf = dir.resolve("fence.conf");
        Files.writeString(conf, "store = redis://edited:6379\n");
        var second = TestRootCommand.run(ENV, "install", "--ghes", dir.toString());
        assertEquals(0, second.exit(), second.err());
        assertEquals("store = redis://edited:6379\n", Files.readString(conf));
        assertTrue(second.out().contains("kept " + conf), second.out());
    }

    @Test
    void ghesRefusesForeignFilesAndRejectsAFileAsDirectory() throws IOException {
        Path dir = Files.createDirectory(tmp.resolve("ghes"));
        Files.writeString(dir.resolve("Dockerfile.hook-env"), "FROM scratch\n");
        var r = TestRootCommand.run(ENV, "install", "--ghes", dir.toString(), "--store", "redis://h:1");
        assertEquals(6, r.exit());
        assertFalse(Files.exists(dir.resolve("fence-pre-receive.sh")), "nothing written on refusal");
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        assertEquals(
                2,
                TestRootCommand.run(ENV, "install", "--ghes", file.toString()).exit());
    }

    @Test
    void curlShimForGhesAndGitlabIsTheRepositoryScriptWithAPrivateConf() throws Exception {
        String shim = Files.readString(Path.of("hooks/pre-receive-curl.sh"));
        assertEquals(shim, HookScripts.curlShim(), "the jar's shim is hooks/pre-receive-curl.sh byte for byte");

        Path ghes = tmp.resolve("ghes");
        var r = TestRootCommand.run(
                ENV, "install", "--ghes", ghes.toString(), "--shim", "curl", "--server", "http://fence.internal:8700");
        assertEquals(0, r.exit(), r.err());
        assertEquals(shim, Files.readString(ghes.resolve("fence-pre-receive.sh")));
        assertEquals("rwxr-xr-x", perms(ghes.resolve("fence-pre-receive.sh")));
        assertEquals("rw-------", perms(ghes.resolve("fence-shim.conf")));
        assertTrue(Files.readString(ghes.resolve("fence-shim.conf"))
                .contains("FENCE_SERVER=http://fence.internal:8700\n"));
        assertFalse(Files.exists(ghes.resolve("Dockerfile.hook-env")), "the default environment suffices");
        assertTrue(r.out().contains("fence serve credentials add"), r.out());
        assertTrue(Files.readString(ghes.resolve("fence-shim.conf")).contains("FENCE_FENCED_REFS=refs/heads/*\n"));
        assertTrue(Files.readString(ghes.resolve("fence-shim.conf")).contains("FENCE_REPO_ID_FROM=GITHUB_REPO_NAME\n"));
        // Again without --server, with the server's policy: the server and the credential the conf holds by
        // then are kept, and what the policy says is written anew.
        Files.writeString(
                ghes.resolve("fence-shim.conf"),
                "FENCE_CREDENTIAL=ghes:" + "s".repeat(43) + "\n",
                java.nio.file.StandardOpenOption.APPEND);
        Path policy = Files.writeString(tmp.resolve("server-fence.conf"), "fenced-refs = refs/heads/release/*\n");
        r = TestRootCommand.run(
                ENV, "install", "--ghes", ghes.toString(), "--shim", "curl", "--config", policy.toString());
        assertEquals(0, r.exit(), r.err());
        assertFalse(r.err().contains("no FENCE_SERVER yet") || r.out().contains("no FENCE_SERVER yet"), r.out());
        String conf = Files.readString(ghes.resolve("fence-shim.conf"));
        assertTrue(conf.contains("FENCE_SERVER=http://fence.internal:8700\n"), conf);
        assertTrue(conf.contains("FENCE_CREDENTIAL=ghes:" + "s".repeat(43) + "\n"), conf);
        assertTrue(conf.contains("FENCE_FENCED_REFS=refs/heads/release/*([!/])\n"), conf);
        assertEquals("rw-------", perms(ghes.resolve("fence-shim.conf")));
        // A script fence did not write is not replaced.
        Path foreign = Files.createDirectories(tmp.resolve("ghes-foreign"));
        Files.writeString(foreign.resolve("fence-pre-receive.sh"), "#!/bin/sh\nexit 0\n");
        r = TestRootCommand.run(ENV, "install", "--ghes", foreign.toString(), "--shim", "curl");
        assertEquals(6, r.exit(), r.out());
        assertFalse(Files.exists(foreign.resolve("fence-shim.conf")), "nothing written on refusal");

        Path gitlab = tmp.resolve("custom_hooks");
        r = TestRootCommand.run(ENV, "install", "--gitlab-global", gitlab.toString(), "--shim", "curl");
        assertEquals(0, r.exit(), r.err());
        assertEquals(shim, Files.readString(gitlab.resolve("pre-receive.d/50-fence")));
        assertEquals("rw-------", perms(gitlab.resolve("pre-receive.d/fence-shim.conf")));
        assertTrue(r.out().contains("no FENCE_SERVER yet"), r.out());
        // Re-running recognises its own files; --server alone means the shim, and --credential-file fills in
        // the credential (the step that asked for it is gone).
        Path credential = Files.writeString(tmp.resolve("gitlab.credential"), "gitlab:" + "t".repeat(43) + "\n");
        r = TestRootCommand.run(
                ENV,
                "install",
                "--gitlab-global",
                gitlab.toString(),
                "--server",
                "http://fence:8700",
                "--credential-file",
                credential.toString());
        assertEquals(0, r.exit(), r.err());
        assertEquals(shim, Files.readString(gitlab.resolve("pre-receive.d/50-fence")));
        String gitlabConf = Files.readString(gitlab.resolve("pre-receive.d/fence-shim.conf"));
        assertTrue(gitlabConf.contains("\nFENCE_CREDENTIAL=gitlab:" + "t".repeat(43) + "\n"), gitlabConf);
        assertTrue(gitlabConf.contains("\nFENCE_SERVER=http://fence:8700\n"), gitlabConf);
        assertFalse(r.out().contains("fence serve credentials add"), r.out());
        assertFalse(r.out().contains("t".repeat(43)), "the secret was printed");
    }
}
