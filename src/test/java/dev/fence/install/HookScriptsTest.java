package dev.fence.install;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.hook.HookConfig;
import dev.fence.hookpath.JvmSettings;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.Stdin;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@ProcessTest
class HookScriptsTest {
    @TempDir
    Path tmp;

    private static String run(String stdin, String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        Stdin.feed(p, stdin);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    private Path write(String name, String content) throws IOException {
        Path p = tmp.resolve(name);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    @Test
    void launcherPathsWithShellMetacharactersAreQuoted() throws Exception {
        Path launcher = write("it's a \"dir\" with $HOME and `x`/fence", "#!/bin/sh\necho \"ran with: $*\"\ncat\n");
        Path hook = write("pre-receive", HookScripts.preReceive(new Launch.Launcher(launcher.toString())));
        assertEquals("ran with: hook pre-receive\nline\n", run("line\n", hook.toString()));
    }

    /**
     * The locale a hook's JVM starts in: a system UTF-8 one in force is kept (by the character set its name
     * gives before any modifier); any other becomes C.UTF-8, and a pusher's LOCPATH is dropped.
     */
    @Test
    void theJvmStartsInAUtf8Locale() throws Exception {
        Path launcher = write("bin/fence", "#!/bin/sh\necho \"LC_ALL=${LC_ALL-unset}${LOCPATH+ LOCPATH}\"\n");
        Path hook = write("pre-receive", HookScripts.preReceive(new Launch.Launcher(launcher.toString())));
        Map<Map<String, String>, String> cases = Map.of(
                Map.of("LANG", "C"), "C.UTF-8",
                Map.of(), "C.UTF-8",
                Map.of("LANG", "en_US.UTF-8"), "unset",
                Map.of("LC_CTYPE", "de_DE.utf8", "LANG", "C"), "unset",
                Map.of("LC_ALL", "de_DE.ISO-8859-1", "LANG", "en_US.UTF-8"), "C.UTF-8",
                Map.of("LC_ALL", "sr_RS.UTF-8@latin"), "sr_RS.UTF-8@latin",
                Map.of("LC_ALL", "POSIX"), "C.UTF-8",
                // glibc reads the part after '@' as a modifier: this locale is Latin-1.
                Map.of("LC_ALL", "x.ISO-8859-1@a.UTF-8"), "C.UTF-8",
                Map.of("LANG", "en_US.UTF-8", "LOCPATH", "/tmp/pushers-locales"), "unset");
        for (var c : cases.entrySet()) {
            ProcessBuilder pb = new ProcessBuilder(hook.toString()).redirectErrorStream(true);
            pb.environment().keySet().removeIf(k -> k.equals("LANG") || k.startsWith("LC_"));
            pb.environment().putAll(c.getKey());
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals("LC_ALL=" + c.getValue() + "\n", out, c.getKey().toString());
        }
    }

    /**
     * The launcher itself does the same for {@code fence hook} (hooks written by older versions call it
     * without the script's line), and leaves every other command's locale alone.
     */
    @Test
    void theLauncherStartsAHookJvmInAUtf8Locale() throws Exception {
        Path java = write("jdk/bin/java", "#!/bin/sh\necho \"LC_ALL=${LC_ALL-unset}${LOCPATH+ LOCPATH}\"\n");
        Path jar = write("fence.jar", "");
        Map<List<String>, String> cases = Map.of(
                List.of("hook", "x.ISO-8859-1@a.UTF-8"), "C.UTF-8",
                List.of("hook", "en_US.UTF-8"), "en_US.UTF-8",
                List.of("version", "x.ISO-8859-1@a.UTF-8"), "x.ISO-8859-1@a.UTF-8 LOCPATH");
        for (var c : cases.entrySet()) {
            ProcessBuilder pb = new ProcessBuilder(
                            Path.of("bin/fence").toAbsolutePath().toString(),
                            c.getKey().get(0))
                    .redirectError(ProcessBuilder.Redirect.DISCARD); // bash warns of a locale this machine lacks
            pb.environment().keySet().removeIf(k -> k.equals("LANG") || k.startsWith("LC_"));
            pb.environment().put("FENCE_JAVA", java.toString());
            pb.environment().put("FENCE_JAR", jar.toString());
            pb.environment().put("LC_ALL", c.getKey().get(1));
            pb.environment().put("LOCPATH", tmp.resolve("locales").toString());
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals("LC_ALL=" + c.getValue() + "\n", out, c.getKey().toString());
        }
    }

    @Test
    void everyScriptIsSyntacticallyValid() throws Exception {
        Launch jar = new Launch.JavaJar("/usr/bin/java", "/opt/fence/fence.jar");
        Launch launcher = new Launch.Launcher("/opt/fence/bin/fence");
        Launch direct = new Launch.Direct(
                new Launch.Launcher("/opt/fence/bin/fence"),
                "/usr/lib/jvm/jdk",
                "25.0.3",
                "/opt/fence/lib/fence.jar",
                "redis");
        for (Launch l : List.of(jar, launcher, direct)) {
            run("", "/bin/sh", "-n", write("a", HookScripts.preReceive(l)).toString());
            run("", "/bin/sh", "-n", write("b", HookScripts.postReceive(l)).toString());
            run("", "/bin/sh", "-n", write("c", HookScripts.gitlabPreReceive(l)).toString());
            run(
                    "",
                    "/usr/bin/bash",
                    "-n",
                    write("d", HookScripts.ghesPreReceive(l)).toString());
        }
    }

    @Test
    void postReceiveExitsZeroEvenWhenFenceFails() throws Exception {
        Path failing = write("bin/fence", "#!/bin/sh\nexit 5\n");
        Path hook = write("post-receive", HookScripts.postReceive(new Launch.Launcher(failing.toString())));
        String out = run("", hook.toString());
        assertTrue(out.contains("(exit 5)"), out);
    }

    @Test
    void writtenFenceConfIsReadByHookConfig() throws IOException {
        Path noSystem = tmp.resolve("none");
        Path withStore = Files.writeString(tmp.resolve("a.conf"), HookScripts.fenceConf("redis://h:6379/0"));
        assertEquals(
                Optional.of("redis://h:6379/0"),
                HookConfig.load(null, withStore, noSystem).store());
        Path placeholder = Files.writeString(tmp.resolve("b.conf"), HookScripts.fenceConf(null));
        assertEquals(
                Optional.empty(), HookConfig.load(null, placeholder, noSystem).store());
        String uncommented = HookScripts.fenceConf(null).replace("# store = ", "store = ");
        Path filled = Files.writeString(tmp.resolve("c.conf"), uncommented);
        assertTrue(HookConfig.load(null, filled, noSystem).store().isPresent());
    }

    /** A JDK home whose java prints its arguments, and a launcher that says it ran; in a path that needs quoting. */
    private Launch.Direct fakeDirect(String version) throws IOException {
        return fakeDirect(version, null);
    }

    /** As {@link #fakeDirect(String)}, with the archive of one store's hook. */
    private Launch.Direct fakeDirect(String version, String storeKind) throws IOException {
        Path home = tmp.resolve("it's a jdk");
        write("it's a jdk/bin/java", "#!/bin/sh\necho \"java $*\"\n");
        Files.writeString(
                home.resolve("release"), "IMPLEMENTOR=\"x\"\nJAVA_VERSION=\"" + version + "\"\nOS_NAME=\"Linux\"\n");
        Path launcher = write("bin/fence", "#!/bin/sh\necho \"launcher $*\"\n");
        Path jar = Files.writeString(
                Files.createDirectories(tmp.resolve("lib dir")).resolve("fence.jar"), "jar");
        return new Launch.Direct(
                new Launch.Launcher(launcher.toString()), home.toString(), version, jar.toString(), storeKind);
    }

    private String runHook(Launch.Direct d, Map<String, String> env) throws Exception {
        Path hook = write("pre-receive", HookScripts.preReceive(d));
        ProcessBuilder pb = new ProcessBuilder(hook.toString()).redirectErrorStream(true);
        pb.environment().remove("FENCE_JAVA");
        pb.environment().remove("FENCE_JAR");
        pb.environment().remove("FENCE_JAVA_OPTS");
        pb.environment().putAll(env);
        Process p = pb.start();
        Stdin.feed(p, "");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return out.strip();
    }

    private static void age(Path file, long seconds) throws IOException {
        Files.setLastModifiedTime(
                file, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - seconds * 1000));
    }

    @Test
    void directStartRunsTheJvmWithTheLaunchersOptionsWhileTheArchiveIsCurrent() throws Exception {
        Launch.Direct d = fakeDirect("17.0.15");
        assertEquals(tmp.resolve("lib dir/fence-17.0.15.jsa").toString(), d.archive());
        age(Path.of(d.jar()), 60);
        Files.writeString(Path.of(d.archive()), "archive");
        List<String> expected = new java.util.ArrayList<>(List.of("java"));
        expected.addAll(JvmSettings.allOptions(d.archive(), "17.0.15"));
        expected.addAll(List.of("-cp", d.jar(), "dev.fence.cli.Main", "hook", "pre-receive"));
        assertEquals(String.join(" ", expected), runHook(d, Map.of()));
    }

    @Test
    void directStartFromAStoresArchiveNamesTheStoreForTheHookToPrepare() throws Exception {
        Launch.Direct d = fakeDirect("17.0.15", "sqlite");
        assertEquals(tmp.resolve("lib dir/fence-17.0.15-sqlite.jsa").toString(), d.archive());
        age(Path.of(d.jar()), 60);
        Files.writeString(Path.of(d.archive()), "archive");
        List<String> expected = new java.util.ArrayList<>(List.of("java"));
        expected.addAll(JvmSettings.allOptions(d.archive(), "17.0.15"));
        expected.addAll(
                List.of("-Dfence.hook.store=sqlite", "-cp", d.jar(), "dev.fence.cli.Main", "hook", "pre-receive"));
        assertEquals(String.join(" ", expected), runHook(d, Map.of()));
    }

    @Test
    void directStartUsesAnAotCacheFromJdk25() throws Exception {
        Launch.Direct d = fakeDirect("25.0.3");
        assertTrue(d.archive().endsWith("fence-25.0.3.aot"), d.archive());
        age(Path.of(d.jar()), 60);
        Files.writeString(Path.of(d.archive()), "archive");
        String out = runHook(d, Map.of());
        assertTrue(
                out.contains(" --enable-native-access=ALL-UNNAMED -Djdk.console=java.base -XX:AOTCache=" + d.archive()
                        + " -cp "),
                out);
    }

    @Test
    void directStartLeavesEverythingElseToTheLauncher() throws Exception {
        Launch.Direct d = fakeDirect("17.0.15");
        Path archive = Path.of(d.archive());
        assertEquals("launcher hook pre-receive", runHook(d, Map.of()), "no archive yet");

        Files.writeString(archive, "archive");
        age(archive, 60);
        assertEquals("launcher hook pre-receive", runHook(d, Map.of()), "an archive older than the jar");

        age(Path.of(d.jar()), 120);
        assertTrue(runHook(d, Map.of()).startsWith("java "), "current again");
        for (String setting : List.of("FENCE_JAVA", "FENCE_JAR", "FENCE_JAVA_OPTS", "JAVA_TOOL_OPTIONS")) {
            assertTrue(runHook(d, Map.of(setting, "x")).startsWith("java "), setting + " is not the pusher's to set");
        }

        Files.writeString(Path.of(d.javaHome(), "release"), "JAVA_VERSION=\"17.0.16\"\n");
        assertEquals("launcher hook pre-receive", runHook(d, Map.of()), "the JDK was upgraded in place");
    }

    /**
     * What a pusher could set to swap the program that judges it (on a local-path remote the hook's
     * environment is the pusher's): the launcher runs on the java and jar install pinned, and no variable
     * the JVM or the launcher reads for options reaches it.
     */
    @Test
    void theLauncherRunsOnWhatInstallPinnedWhateverThePushersEnvironmentSays() throws Exception {
        Path launcher = write(
                "bin/env-fence",
                "#!/bin/sh\necho \"java=${FENCE_JAVA-unset} jar=${FENCE_JAR-unset} opts=${FENCE_JAVA_OPTS-unset}"
                        + " tool=${JAVA_TOOL_OPTIONS-unset} jdk=${JDK_JAVA_OPTIONS-unset} _=${_JAVA_OPTIONS-unset}\"\n");
        Map<String, String> pusher = Map.of(
                "FENCE_JAVA", "/tmp/evil/java",
                "FENCE_JAR", "/tmp/evil.jar",
                "FENCE_JAVA_OPTS", "-javaagent:/tmp/evil.jar",
                "JAVA_TOOL_OPTIONS", "-javaagent:/tmp/evil.jar",
                "JDK_JAVA_OPTIONS", "-javaagent:/tmp/evil.jar",
                "_JAVA_OPTIONS", "-javaagent:/tmp/evil.jar");
        Launch pinned = new Launch.Launcher(launcher.toString(), "/opt/jdk/bin/java", "/opt/fence/lib/fence.jar");
        assertEquals(
                "java=/opt/jdk/bin/java jar=/opt/fence/lib/fence.jar opts=unset tool=unset jdk=unset _=unset",
                runScript(HookScripts.preReceive(pinned), pusher));
        assertEquals(
                "java=/opt/jdk/bin/java jar=/opt/fence/lib/fence.jar opts=unset tool=unset jdk=unset _=unset",
                runScript(HookScripts.postReceive(pinned), pusher));
        assertEquals(
                "java=unset jar=unset opts=unset tool=unset jdk=unset _=unset",
                runScript(HookScripts.preReceive(new Launch.Launcher(launcher.toString())), pusher),
                "a launcher without pins picks its own java and its own jar, never the pusher's");
        Path printsArgs = write("jdk/bin/java", "#!/bin/sh\necho \"$* tool=${JAVA_TOOL_OPTIONS-unset}\"\n");
        assertEquals(
                "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:CompileThresholdScaling=10 -Xss1m"
                        + " -XX:-UsePerfData -Xshare:auto -jar /opt/fence/lib/fence.jar hook pre-receive tool=unset",
                runScript(
                        HookScripts.preReceive(new Launch.JavaJar(printsArgs.toString(), "/opt/fence/lib/fence.jar")),
                        pusher));
    }

    private String runScript(String script, Map<String, String> env) throws Exception {
        Path hook = write("hook-under-test", script);
        ProcessBuilder pb = new ProcessBuilder(hook.toString()).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        Stdin.feed(p, "");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return out.strip();
    }

    @Test
    void markerMustBeALineOfItsOwn() {
        assertTrue(HookScripts.isOurs("#!/bin/sh\n# installed by fence\n".getBytes(StandardCharsets.UTF_8)));
        assertFalse(HookScripts.isOurs("#!/bin/sh\necho '# installed by fence?'\n".getBytes(StandardCharsets.UTF_8)));
        assertFalse(HookScripts.isOurs("#!/bin/sh\nexit 0\n".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void recognisesDispatchers() {
        assertTrue(HookScripts.isDispatcher(
                "#!/usr/bin/env bash\n# AUTO GENERATED BY GITEA, DO NOT MODIFY\n".getBytes(StandardCharsets.UTF_8)));
        assertTrue(HookScripts.isDispatcher(
                "for hook in ${GIT_DIR}/hooks/${hookname}.d/*; do\n".getBytes(StandardCharsets.UTF_8)));
        assertFalse(HookScripts.isDispatcher("#!/bin/sh\nexit 0\n".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void tarFirstNameAndOwnership() {
        byte[] ours = Tar.archive(List.of(
                Tar.Entry.directory("custom_hooks"),
                Tar.Entry.file("custom_hooks/x", 0755, HookScripts.gitlabPreReceive(new Launch.Launcher("/f")))));
        assertEquals("custom_hooks/", Tar.firstName(ours));
        assertTrue(GitLabInstaller.isOurTarball(ours));
        assertEquals(0, ours.length % 512);
        byte[] other = Tar.archive(List.of(Tar.Entry.file("readme", 0644, HookScripts.MARKER + "\n")));
        assertFalse(GitLabInstaller.isOurTarball(other));
        assertEquals(null, Tar.firstName("plain text".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void shellQuoting() {
        assertEquals("/opt/fence/bin/fence", Shell.quote("/opt/fence/bin/fence"));
        assertEquals("'a b'", Shell.quote("a b"));
        assertEquals("'it'\\''s'", Shell.quote("it's"));
        assertEquals("''", Shell.quote(""));
    }
}
