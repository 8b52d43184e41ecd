package dev.fence.hookpath;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Every JVM flag and system property fence starts or runs with, in one place: the flags of a short-lived
 * command's JVM (a hook runs once per push) and the class-data archive it starts from, which the {@code
 * bin/fence} launcher, the hooks {@code fence install} writes, the benchmark and the test harness all use
 * ({@code JvmSettingsTest} checks that the launcher says the same), and the system properties the process
 * entry ({@link ProcessEntry}) sets before anything else runs.
 *
 * <p>Each setting saves start-up work without changing what fence does; each says what it saves and the
 * {@code fence bench} row that measures it ("Java hook, SQLite|Redis, JDK 17|25", against "JVM floor"). The
 * one property set elsewhere is sqlite-jdbc's library path, which {@code SqliteNative} sets only once it has
 * a verified cached library to point at.
 */
public final class JvmSettings {
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
    public static List<String> withSharing(List<String> options) {
        List<String> all = new ArrayList<>(options);
        all.add("-Xshare:auto");
        return List.copyOf(all);
    }

    /** The class fence's JVM starts (which hands the process to {@link ProcessEntry}). */
    public static final String MAIN = "dev.fence.cli.Main";

    private JvmSettings() {}

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
     * ({@code Stores.preload}: the SQLite binding seam). A hint: the configuration still decides.
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

    private static final String SLF4J_PROVIDER = "slf4j.provider";
    private static final String SLF4J_VERBOSITY = "slf4j.internal.verbosity";
    private static final String INCLUDE_IN_EXCEPTIONS = "jdk.includeInExceptions";
    private static final String NATIVE_ACCESSORS = "jdk.reflect.useNativeAccessorOnly";

    /**
     * Sets the system properties fence runs with, each unless the operator set it: they spare a process work
     * at start-up without changing what it does. The recording JVM of a training run sets them as a hook
     * does, so that the archive holds the classes a hook then loads.
     *
     * @param hook for a hook process (and the recording JVM), which also gets the settings that suit only a
     *     short-lived process
     */
    public static void applyProperties(boolean hook) {
        // SLF4J (sqlite-jdbc and Jedis log through it; the jar carries only its no-op binding) finds its
        // binding by a service lookup, which opens and indexes the whole jar; named, it is loaded as a class.
        // Its internal verbosity keeps it from announcing that on stderr, which a git host would show every
        // pusher. Bench: "Java hook, SQLite" rows (the driver logs through SLF4J).
        if (System.getProperty(SLF4J_PROVIDER) == null) {
            System.setProperty(SLF4J_PROVIDER, "org.slf4j.nop.NOPServiceProvider");
            if (System.getProperty(SLF4J_VERBOSITY) == null) {
                System.setProperty(SLF4J_VERBOSITY, "WARN");
            }
        }
        if (System.getProperty(INCLUDE_IN_EXCEPTIONS) == null) {
            // From JDK 25 the first socket reads this setting while initialising InetAddress, and without a
            // system property it loads the whole java.security file for it. The value is that file's
            // default, so messages are the same either way. Bench: "Java hook, Redis, JDK 25".
            System.setProperty(INCLUDE_IN_EXCEPTIONS, "hostInfoExclSocket");
        }
        if (hook && System.getProperty(NATIVE_ACCESSORS) == null) {
            // From JDK 18 core reflection calls through method handles, and the first call in a process spins
            // a class for one (a hook's first socket reflects once, on the JDK's own enum of operating
            // systems). A process that reflects a handful of times is served as well by the JDK's native
            // accessors, which this selects; JDK 17 ignores it. Bench: "Java hook, Redis, JDK 25".
            System.setProperty(NATIVE_ACCESSORS, "true");
        }
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
