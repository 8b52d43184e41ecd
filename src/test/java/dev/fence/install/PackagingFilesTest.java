package dev.fence.install;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.hook.HookConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The container and hook-environment recipes against what they serve, read as files (no Docker engine
 * needed): the image's build stage has every file the build reads, the compose file mounts the
 * credentials' directory, and the GHES hook environment has the git the Java hook asks about ancestry.
 */
class PackagingFilesTest {
    @TempDir
    Path tmp;

    /** Every path of the source tree that pom.xml and the release descriptor name, relative to the root. */
    private static TreeSet<String> pathsTheBuildReads() throws IOException {
        TreeSet<String> paths = new TreeSet<>();
        String pom = Files.readString(Path.of("pom.xml"));
        String release = Files.readString(Path.of("packaging/release.xml"));
        for (String text : List.of(pom, release)) {
            Matcher tags = Pattern.compile("<(directory|source|descriptor)>([^<]+)</\\1>")
                    .matcher(text);
            while (tags.find()) {
                String path = tags.group(2).strip();
                if (!path.startsWith("${")) {
                    paths.add(path);
                }
            }
            Matcher based =
                    Pattern.compile("\\$\\{project\\.basedir\\}/([^<\\s]+)").matcher(text);
            while (based.find()) {
                paths.add(based.group(1));
            }
        }
        paths.add("pom.xml");
        return paths;
    }

    /** The sources of the COPY lines of the Dockerfile's first (build) stage. */
    private static List<String> buildStageCopies() throws IOException {
        List<String> sources = new ArrayList<>();
        int stages = 0;
        for (String line : Files.readAllLines(Path.of("docker/Dockerfile"))) {
            String l = line.strip();
            if (l.startsWith("FROM ")) {
                stages++;
            } else if (stages == 1 && l.startsWith("COPY ")) {
                String[] words = l.substring("COPY ".length()).strip().split("\\s+");
                for (int i = 0; i < words.length - 1; i++) {
                    sources.add(words[i].replaceAll("/$", ""));
                }
            }
        }
        return sources;
    }

    private static boolean covers(String copied, String path) {
        return path.equals(copied) || path.startsWith(copied + "/");
    }

    @Test
    void theImagesBuildStageHasEveryFileTheBuildReads() throws IOException {
        TreeSet<String> needed = pathsTheBuildReads();
        assertTrue(needed.contains("hooks"), "the curl shim is a resource of the jar: " + needed);
        List<String> copied = buildStageCopies();
        List<String> ignored = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(".dockerignore"))) {
            if (!line.isBlank() && !line.startsWith("#")) {
                ignored.add(line.strip().replaceAll("/$", ""));
            }
        }
        for (String path : needed) {
            assertTrue(Files.exists(Path.of(path)), path + " is named by the build but does not exist");
            assertTrue(
                    copied.stream().anyMatch(c -> covers(c, path)),
                    "docker/Dockerfile's build stage does not COPY " + path + " (it copies " + copied + ")");
            assertFalse(
                    ignored.stream().anyMatch(i -> covers(i, path)),
                    ".dockerignore leaves out " + path + ": " + ignored);
        }
    }

    @Test
    void composeMountsTheCredentialsDirectoryNotTheFile() throws IOException {
        String compose = Files.readString(Path.of("docker/compose.yaml"));
        Matcher arg = Pattern.compile("\"--credentials\",\\s*\"([^\"]+)\"").matcher(compose);
        assertTrue(arg.find(), compose);
        Path credentials = Path.of(arg.group(1));
        Matcher mounts =
                Pattern.compile("(?m)^\\s*-\\s*(\\S+):(/[^:\\s]+)(:\\w+)?\\s*$").matcher(compose);
        List<String> targets = new ArrayList<>();
        while (mounts.find()) {
            targets.add(mounts.group(2));
        }
        assertFalse(
                targets.contains(credentials.toString()),
                "the credentials file is mounted by itself: a revoke (which replaces it) would never reach the"
                        + " container");
        assertTrue(
                targets.contains(credentials.getParent().toString()),
                "no mount of " + credentials.getParent() + ": " + targets);
        String image = Files.readString(Path.of("docker/Dockerfile"));
        assertTrue(image.contains("\"--credentials\", \"" + credentials + "\""), "the image's default agrees");
    }

    @Test
    void theGhesHookEnvironmentHasTheGitItsFenceConfNames() throws IOException {
        for (String recipe :
                List.of(Files.readString(Path.of("docker/Dockerfile.ghes-hook-env")), HookScripts.ghesDockerfile())) {
            assertTrue(recipe.contains("apt-get install -y --no-install-recommends git"), recipe);
            assertTrue(recipe.contains(HookScripts.GHES_GIT + " --version"), recipe);
        }
        Path conf = Files.writeString(tmp.resolve("fence.conf"), HookScripts.ghesFenceConf("redis://h:6379/0"));
        assertEquals(
                HookScripts.GHES_GIT,
                HookConfig.load(null, conf, tmp.resolve("none")).git());
    }
}
