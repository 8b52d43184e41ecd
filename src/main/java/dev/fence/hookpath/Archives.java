package dev.fence.hookpath;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Builds the class-data archive (AppCDS below JDK 25, an AOT cache from 25) a hook starts from, through the
 * launcher's {@code --build-archive} (which runs {@link ArchiveTraining}). The archive seam: a hook that
 * starts from an archive trained on its own path loads its classes pre-parsed instead of from the jar
 * (bench: "Java hook" rows, against "JVM floor").
 */
public final class Archives {
    private Archives() {}

    /** The jar fence was loaded from, or null when it was not loaded from a jar file. */
    public static Path runningJar() {
        try {
            URL location = Archives.class.getProtectionDomain().getCodeSource().getLocation();
            Path jar = Path.of(location.toURI());
            return jar.toString().endsWith(".jar") && Files.isRegularFile(jar) ? jar : null;
        } catch (URISyntaxException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Where the archive for {@code jar} on a JDK of {@code javaVersion} goes: beside the jar ({@link
     * JvmSettings#archive}, where the launcher also looks) when this process may write there; else, since
     * the installing user need not own the fence installation (a repository owner installing into its own
     * repositories), in that user's cache: {@code $XDG_CACHE_HOME/fence/} or {@code ~/.cache/fence/}, under a
     * name that also carries a hash of the jar's path, so that two installations never share one. Null
     * when neither can be written. The path is written into the hook, never looked up through the hook's
     * environment (the pusher's, on a local-path remote, who could otherwise hand the JVM an archive of
     * its own classes).
     *
     * @param env the installer's environment ({@code XDG_CACHE_HOME}, {@code HOME})
     */
    public static Path location(Path jar, String javaVersion, String storeKind, Map<String, String> env) {
        Path beside = JvmSettings.archive(jar, javaVersion, storeKind);
        if (Files.isWritable(beside.getParent()) && (!Files.exists(beside) || Files.isWritable(beside))) {
            return beside;
        }
        String xdg = env.get("XDG_CACHE_HOME");
        String home = env.get("HOME");
        Path cache;
        if (xdg != null && xdg.startsWith("/")) {
            cache = Path.of(xdg, "fence");
        } else if (home != null && home.startsWith("/")) {
            cache = Path.of(home, ".cache", "fence");
        } else {
            return null;
        }
        String hash =
                Integer.toHexString(jar.toAbsolutePath().normalize().toString().hashCode());
        String name = beside.getFileName().toString();
        int dash = name.indexOf('-');
        return cache.resolve(name.substring(0, dash) + "-" + hash + name.substring(dash));
    }

    /**
     * Best effort: when this jar has no current archive at {@code archive} yet, runs {@code <launcher>
     * --build-archive [storeKind]} once to write it there, so that the first push already starts from it.
     * The training never touches the hook's own store: a Redis hook's archive is trained on a private
     * {@code redis-server} when the machine has one.
     *
     * @param launcherPath the launcher, by absolute path
     * @param archive where the archive goes ({@link #location})
     * @param env the environment the launcher runs in
     * @return what to tell the operator (a failure says why, in the launcher's own last words), or null
     *     when there was nothing to do
     */
    public static String buildOnce(String launcherPath, String storeKind, Path archive, Map<String, String> env) {
        try {
            Path launcherFile = Path.of(launcherPath);
            Path jar = runningJar();
            if (!launcherFile.isAbsolute() || !Files.isExecutable(launcherFile) || jar == null) {
                return null;
            }
            if (Files.exists(archive)
                    && Files.getLastModifiedTime(archive).compareTo(Files.getLastModifiedTime(jar)) > 0) {
                return null;
            }
            Files.createDirectories(archive.getParent());
            List<String> command = new ArrayList<>(List.of(launcherPath, "--build-archive"));
            if (storeKind != null) {
                command.add(storeKind);
            }
            String shown = String.join(" ", command);
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            pb.environment().clear();
            pb.environment().putAll(env);
            pb.environment().put("FENCE_JAR", jar.toString());
            pb.environment()
                    .put(
                            "FENCE_JAVA",
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString());
            pb.environment().put(ARCHIVE_ENV, archive.toString());
            pb.environment().remove("FENCE_JAVA_OPTS");
            Process p = pb.start();
            p.getOutputStream().close();
            Tail tail = new Tail(p.getInputStream());
            tail.start();
            if (p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0) {
                return "built the class-data archive the hook starts from, " + archive + " (" + shown + ")";
            }
            p.destroyForcibly();
            tail.join(5_000);
            return "warning: could not build the hook's class-data archive " + archive + ": " + tail.last()
                    + "; pushes work, a little slower (run " + ARCHIVE_ENV + "=" + archive + " " + shown
                    + " to retry)";
        } catch (IOException | RuntimeException e) {
            return "warning: could not build the hook's class-data archive " + archive + " (" + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The variable that tells {@code bin/fence --build-archive} where to write (read by that command only). */
    public static final String ARCHIVE_ENV = "FENCE_ARCHIVE";

    /** Drains a process's output, keeping its last three non-blank lines: what went wrong, when it did. */
    private static final class Tail extends Thread {
        private final InputStream in;
        private final ArrayDeque<String> last = new ArrayDeque<>();

        Tail(InputStream in) {
            this.in = in;
            setDaemon(true);
        }

        @Override
        public void run() {
            try (var reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    if (!line.isBlank()) {
                        synchronized (last) {
                            last.addLast(line.strip());
                            if (last.size() > 3) {
                                last.removeFirst();
                            }
                        }
                    }
                }
            } catch (IOException e) {
                // The process is gone; what was read is what there is to say.
            }
        }

        /** The last three lines, or a placeholder when there were none. */
        String last() {
            synchronized (last) {
                return last.isEmpty() ? "the training run failed" : String.join(" | ", last);
            }
        }
    }
}
