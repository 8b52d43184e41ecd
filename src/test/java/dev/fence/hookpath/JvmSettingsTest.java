package dev.fence.hookpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JvmSettingsTest {
    @TempDir
    Path tmp;

    /** The words of the bash array assignment {@code name=(...)} that starts a line of the launcher. */
    private static List<String> launcherArray(String name, String guard) throws IOException {
        List<String> lines = Files.readAllLines(Path.of("bin/fence"), StandardCharsets.UTF_8);
        boolean armed = guard == null;
        for (String line : lines) {
            if (!armed && line.contains(guard)) {
                armed = true;
            }
            String t = line.strip();
            if (armed && t.startsWith(name + "=(") && t.endsWith(")")) {
                return List.of(t.substring(name.length() + 2, t.length() - 1).split(" "));
            }
        }
        throw new AssertionError("bin/fence has no " + name + "=(...) line");
    }

    /** The values of every {@code name+=(value)} line of the launcher, in order. */
    private static List<String> launcherAppends(String name) throws IOException {
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("bin/fence"), StandardCharsets.UTF_8)) {
            String t = line.strip();
            if (t.startsWith(name + "+=(") && t.endsWith(")")) {
                out.add(t.substring(name.length() + 3, t.length() - 1));
            }
        }
        return out;
    }

    @Test
    void theLauncherStartsShortLivedCommandsWithTheSameOptions() throws IOException {
        // An installed hook that starts the JVM itself must start it exactly as the launcher would, or the
        // archive the launcher built could not be used.
        assertEquals(JvmSettings.OPTIONS, launcherArray("opts", null));
        assertEquals(JvmSettings.jdkOptions(22), launcherAppends("jdk_opts"));
        assertEquals(List.of(), JvmSettings.jdkOptions(21));
        String launcher = Files.readString(Path.of("bin/fence"), StandardCharsets.UTF_8);
        assertTrue(launcher.contains("archive_base=\"${jar%.jar}-${jdk_version:-unknown}\""), "archive naming");
        assertTrue(launcher.contains("target=\"$archive_base${kind:+-$kind}\""), "a store's archive");
        assertTrue(launcher.contains("opts+=(\"-XX:AOTCache=$archive_base.aot\")"));
        assertTrue(launcher.contains("opts+=(\"-XX:SharedArchiveFile=$archive_base.jsa\" -Xshare:auto)"));
        assertTrue(launcher.contains(JvmSettings.MAIN + " \"$@\""));
    }

    @Test
    void archiveNamesFollowTheLauncher() {
        Path jar = Path.of("/opt/fence/fence.jar");
        assertEquals(Path.of("/opt/fence/fence-17.0.15.jsa"), JvmSettings.archive(jar, "17.0.15"));
        assertEquals(Path.of("/opt/fence/fence-25.0.3.aot"), JvmSettings.archive(jar, "25.0.3"));
        assertEquals(Path.of("/opt/fence/fence-25.aot"), JvmSettings.archive(jar, "25"));
        assertEquals(Path.of("/opt/fence/fence-17.0.15-redis.jsa"), JvmSettings.archive(jar, "17.0.15", "redis"));
        assertEquals(Path.of("/opt/fence/fence-25.0.3-sqlite.aot"), JvmSettings.archive(jar, "25.0.3", "sqlite"));
        assertEquals("sqlite", JvmSettings.storeKind("sqlite:/var/lib/fence/fence.db"));
        assertEquals("redis", JvmSettings.storeKind("rediss://h:6380/0"));
        assertEquals("redis", JvmSettings.storeKind("redis-sentinel://s1:26379,s2:26379/fence"));
        assertEquals(null, JvmSettings.storeKind("http://fence:8700"));
        assertEquals(null, JvmSettings.storeKind(null));
        assertEquals(
                List.of("-XX:SharedArchiveFile=/a.jsa", "-Xshare:auto"),
                JvmSettings.archiveOptions("/a.jsa", "24.0.1"));
        assertEquals(List.of("-XX:AOTCache=/a.aot"), JvmSettings.archiveOptions("/a.aot", "26-ea"));
    }

    @Test
    void featureReleases() {
        assertEquals(17, JvmSettings.feature("17.0.15"));
        assertEquals(25, JvmSettings.feature("25"));
        assertEquals(26, JvmSettings.feature("26-ea"));
        assertEquals(0, JvmSettings.feature("unknown"));
        assertEquals(0, JvmSettings.feature(""));
    }

    @Test
    void releaseVersionIsReadAsTheLauncherReadsIt() throws IOException {
        Files.writeString(tmp.resolve("release"), "IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"25.0.3\"\n");
        assertEquals(Optional.of("25.0.3"), JvmSettings.releaseVersion(tmp));
        assertEquals(Optional.empty(), JvmSettings.releaseVersion(tmp.resolve("missing")));
        assertEquals(
                JvmSettings.releaseVersion(Path.of(System.getProperty("java.home")))
                        .map(JvmSettings::feature),
                Optional.of(Runtime.version().feature()),
                "this JDK's own release file");
    }
}
