package dev.fence.hookpath;

import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
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
     * Best effort: when a hook runs through a launcher given by absolute path and this jar has no current
     * archive for this JDK yet (the name {@code bin/fence} looks for), runs {@code <launcher> --build-archive
     * [storeKind]} once, so that the first push already starts from the archive. The training never touches
     * the hook's own store: a Redis hook's archive is trained on a private {@code redis-server} when the
     * machine has one.
     *
     * @param env the environment the launcher runs in
     * @return what to tell the operator, or null when there was nothing to do
     */
    public static String buildOnce(String launcherPath, String storeKind, Map<String, String> env) {
        try {
            Path launcherFile = Path.of(launcherPath);
            Path jar = runningJar();
            if (!launcherFile.isAbsolute() || !Files.isExecutable(launcherFile) || jar == null) {
                return null;
            }
            String version = JvmSettings.releaseVersion(Path.of(System.getProperty("java.home")))
                    .orElse("unknown");
            Path archive = JvmSettings.archive(jar, version, storeKind);
            if (Files.exists(archive)
                    && Files.getLastModifiedTime(archive).compareTo(Files.getLastModifiedTime(jar)) > 0) {
                return null;
            }
            List<String> command = new ArrayList<>(List.of(launcherPath, "--build-archive"));
            if (storeKind != null) {
                command.add(storeKind);
            }
            String shown = String.join(" ", command);
            ProcessBuilder pb = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD);
            pb.environment().clear();
            pb.environment().putAll(env);
            pb.environment().put("FENCE_JAR", jar.toString());
            Process p = pb.start();
            p.getOutputStream().close();
            if (p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0) {
                return "built the class-data archive the hook starts from (" + shown + ")";
            }
            p.destroyForcibly();
            return "warning: could not build the hook's class-data archive; pushes work, a little slower" + " (run "
                    + shown + " to retry)";
        } catch (IOException | RuntimeException e) {
            return "warning: could not build the hook's class-data archive (" + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
