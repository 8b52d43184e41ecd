package dev.fence.install;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How the JVM of a short-lived fence command (a hook runs once per push) is started: the options and
 * the class-data archive that the {@code bin/fence} launcher uses, in one place for the installer and
 * the benchmark. {@code HookJvmTest} checks that the launcher says the same.
 */
public final class HookJvm {
    /**
     * Start-up is all that matters: C1 only, on one compiler thread (more would compete with the hook's
     * own threads on a small machine), compiling only code run ten times as often as it would by default
     * (a push of a few refs then runs interpreted, leaving both cores to the hook, while the loops of a
     * push of thousands of refs are still compiled), the serial collector, small thread stacks, no perf
     * data file.
     */
    public static final List<String> OPTIONS = List.of(
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-XX:CICompilerCount=1",
            "-XX:CompileThresholdScaling=10",
            "-Xss1m",
            "-XX:-UsePerfData");

    /** {@code options} and {@code -Xshare:auto}: the JDK's own class-data archive when it can be mapped. */
    static List<String> withSharing(List<String> options) {
        List<String> all = new ArrayList<>(options);
        all.add("-Xshare:auto");
        return List.copyOf(all);
    }

    /** The class fence's JVM starts. */
    public static final String MAIN = "dev.fence.cli.Main";

    private HookJvm() {}

    /**
     * Options a JDK of {@code feature} (17, 25...) needs whatever fence runs, also in the training run:
     * from 22, native access for sqlite-jdbc (else a warning on stderr that a git host shows to every
     * pusher) and java.base's console (JDK 22's default finds one through a service lookup that loads
     * JLine).
     */
    public static List<String> jdkOptions(int feature) {
        return feature >= 22 ? List.of("--enable-native-access=ALL-UNNAMED", "-Djdk.console=java.base") : List.of();
    }

    /**
     * The archive {@code bin/fence --build-archive} writes for {@code jar} on a JDK of {@code javaVersion}:
     * {@code <jar without .jar>-<version>.aot} (an AOT cache, JDK 25+) or {@code .jsa} (AppCDS).
     */
    public static Path archive(Path jar, String javaVersion) {
        return archive(jar, javaVersion, null);
    }

    /**
     * The archive {@code bin/fence --build-archive <storeKind>} writes: trained on that store's hook only,
     * {@code <jar without .jar>-<version>-<storeKind>.aot|.jsa}; with {@code storeKind} null, the archive of
     * all stores ({@link #archive(Path, String)}).
     */
    public static Path archive(Path jar, String javaVersion, String storeKind) {
        String name = jar.getFileName().toString();
        String base = name.endsWith(".jar") ? name.substring(0, name.length() - ".jar".length()) : name;
        return jar.resolveSibling(base + "-" + javaVersion + (storeKind == null ? "" : "-" + storeKind)
                + (feature(javaVersion) >= 25 ? ".aot" : ".jsa"));
    }

    /**
     * The store kind ({@code sqlite} or {@code redis}) a store URL names, for {@link #archive(Path, String,
     * String)}; null for anything else.
     */
    public static String storeKind(String storeUrl) {
        if (storeUrl == null) {
            return null;
        }
        String u = storeUrl.strip();
        if (u.startsWith("sqlite:")) {
            return "sqlite";
        }
        return u.startsWith("redis://") || u.startsWith("rediss://") || u.startsWith("redis-sentinel://")
                ? "redis"
                : null;
    }

    /** The options that make a JVM of {@code javaVersion} use {@code archive}. */
    public static List<String> archiveOptions(String archive, String javaVersion) {
        return feature(javaVersion) >= 25
                ? List.of("-XX:AOTCache=" + archive)
                : List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto");
    }

    /**
     * The system property that tells a hook process which kind of store it was installed for ({@link
     * #storeKind}), so that it starts loading what that store needs before it has read its configuration
     * ({@code Stores.preload}). A hint: the configuration still decides.
     */
    public static final String STORE_HINT = "fence.hook.store";

    /** The options that pass {@code storeKind} as {@link #STORE_HINT}; none for the archive of all stores. */
    public static List<String> storeHint(String storeKind) {
        return storeKind == null ? List.of() : List.of("-D" + STORE_HINT + "=" + storeKind);
    }

    /** Every option of a hook JVM of {@code javaVersion} using {@code archive}, in the launcher's order. */
    public static List<String> allOptions(String archive, String javaVersion) {
        List<String> all = new ArrayList<>(OPTIONS);
        all.addAll(jdkOptions(feature(javaVersion)));
        all.addAll(archiveOptions(archive, javaVersion));
        return all;
    }

    /** The feature release of a version string: 17 for {@code 17.0.15}, 25 for {@code 25}; 0 if unreadable. */
    public static int feature(String javaVersion) {
        int end = 0;
        while (end < javaVersion.length() && Character.isDigit(javaVersion.charAt(end))) {
            end++;
        }
        if (end == 0 || end > 4) {
            return 0;
        }
        return Integer.parseInt(javaVersion.substring(0, end));
    }

    /**
     * The {@code JAVA_VERSION} of the JDK or JRE at {@code javaHome}, read from its {@code release} file as
     * the launcher reads it (the archive names carry it), or empty when there is none.
     */
    public static Optional<String> releaseVersion(Path javaHome) {
        try {
            for (String line : Files.readAllLines(javaHome.resolve("release"), StandardCharsets.UTF_8)) {
                if (line.startsWith("JAVA_VERSION=")) {
                    String v = line.substring("JAVA_VERSION=".length())
                            .replace("\"", "")
                            .strip();
                    return v.isEmpty() ? Optional.empty() : Optional.of(v);
                }
            }
        } catch (IOException e) {
            // no release file: no version
        }
        return Optional.empty();
    }
}
