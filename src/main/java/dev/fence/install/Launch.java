package dev.fence.install;

import dev.fence.core.InvalidInputException;
import dev.fence.hookpath.JvmSettings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How an installed hook starts fence on the git server: through the {@code fence} launcher script, or
 * by running a JRE on the fence jar directly (GitLab's Gitaly nodes and GHES's hook environment have no
 * launcher, and pass hooks too few variables to find one).
 */
public sealed interface Launch {
    /**
     * JVM options for a hook that runs {@code java -jar}: the launcher's ({@link JvmSettings#OPTIONS}: it runs
     * once per push, so start-up time is all that matters), and the JDK's class-data sharing when
     * available.
     */
    List<String> HOOK_JVM_OPTIONS = JvmSettings.withSharing(JvmSettings.OPTIONS);

    /** The shell command line that runs fence with {@code args}, every word quoted as needed. */
    String command(String... args);

    /**
     * Runs {@code path} (the {@code bin/fence} launcher, or plain {@code fence} found through PATH), with the
     * launcher's {@code FENCE_JAVA} and {@code FENCE_JAR} set by the hook script to {@code java} and {@code
     * jar} when given, and unset otherwise: never taken from the environment the hook runs in (see {@link
     * HookScripts}).
     *
     * @param java the java the launcher runs, or null for the launcher's own choice
     * @param jar the jar the launcher runs, or null for the one beside it
     */
    record Launcher(String path, String java, String jar) implements Launch {
        public Launcher {
            requireText("launcher", path);
            if (java != null) {
                requireText("java", java);
            }
            if (jar != null) {
                requireText("jar", jar);
            }
        }

        /** A launcher that picks java and its jar itself. */
        public Launcher(String path) {
            this(path, null, null);
        }

        @Override
        public String command(String... args) {
            List<String> words = new ArrayList<>();
            words.add(path);
            words.addAll(List.of(args));
            return join(words);
        }

        /** True when the hook will look fence up through the git server's PATH. */
        public boolean viaPath() {
            return path.indexOf('/') < 0;
        }
    }

    /**
     * Starts the JVM straight from the hook script, with the options and class-data archive that {@code
     * launcher} would use, while that archive (made by {@code --build-archive} for this JDK and this jar) is
     * current; otherwise runs {@code launcher}, pinned to the same java and jar. Saves each push the
     * launcher's own process (a bash start and its checks), which is most of what a JVM hook costs beyond
     * the JVM. Written by {@code fence install --bare} when a launcher is known for the jar it runs from, so
     * all four paths are known to belong together.
     *
     * <p>With a store kind, the archive is the one trained on that store's hook alone ({@code --build-archive
     * sqlite|redis}): a JVM relocates every page of its archive at start-up (and, on JDK 25, loads every
     * class of an AOT cache), so the leaner archive starts each push measurably sooner. A hook whose store
     * later changes kind still works, from an archive that lacks its store's classes.
     *
     * @param launcher the launcher to fall back on (its java and jar pins are replaced by this start's)
     * @param javaHome the JDK or JRE home the archive is for
     * @param javaVersion that JDK's {@code JAVA_VERSION} as its {@code release} file spells it
     * @param jar the fence jar the launcher runs
     * @param storeKind {@code sqlite}, {@code redis}, or null for the archive of all stores
     * @param archive the archive the direct start uses: beside the jar ({@link JvmSettings#archive}) or,
     *     where the installing user cannot write there, in that user's cache ({@code
     *     dev.fence.hookpath.Archives#location})
     */
    record Direct(Launcher launcher, String javaHome, String javaVersion, String jar, String storeKind, String archive)
            implements Launch {
        public Direct {
            if (storeKind != null && !storeKind.equals("sqlite") && !storeKind.equals("redis")) {
                throw new InvalidInputException("store kind must be sqlite or redis, not " + storeKind);
            }
            Objects.requireNonNull(launcher, "launcher");
            requireText("java home", javaHome);
            requireText("java version", javaVersion);
            requireText("jar", jar);
            requireText("archive", archive);
            if (javaVersion.indexOf('"') >= 0 || javaVersion.indexOf('\\') >= 0) {
                throw new InvalidInputException("java version must not contain quotes: " + javaVersion);
            }
            launcher = new Launcher(
                    launcher.path(), Path.of(javaHome, "bin", "java").toString(), jar);
        }

        /** A direct start from the archive beside the jar. */
        public Direct(Launcher launcher, String javaHome, String javaVersion, String jar, String storeKind) {
            this(
                    launcher,
                    javaHome,
                    javaVersion,
                    jar,
                    storeKind,
                    JvmSettings.archive(Path.of(jar), javaVersion, storeKind).toString());
        }

        /** The launcher's command: what runs whenever the direct start does not apply. */
        @Override
        public String command(String... args) {
            return launcher.command(args);
        }
    }

    /**
     * Runs {@code java} with {@code options} on {@code jar}.
     *
     * @param options the JVM options, {@link #HOOK_JVM_OPTIONS} unless the JDK is known ({@link #pinned})
     */
    record JavaJar(String java, String jar, List<String> options) implements Launch {
        public JavaJar {
            requireText("java", java);
            requireText("jar", jar);
            options = List.copyOf(options);
        }

        /** {@code java} with {@link #HOOK_JVM_OPTIONS} on {@code jar}. */
        public JavaJar(String java, String jar) {
            this(java, jar, HOOK_JVM_OPTIONS);
        }

        /**
         * The java of the JDK at {@code javaHome} (of feature release {@code feature}) on {@code jar}, with the
         * options that JDK needs whatever fence runs ({@link JvmSettings#jdkOptions}) besides {@link
         * #HOOK_JVM_OPTIONS}.
         */
        public static JavaJar pinned(String javaHome, int feature, String jar) {
            List<String> options = new ArrayList<>(HOOK_JVM_OPTIONS);
            options.addAll(JvmSettings.jdkOptions(feature));
            return new JavaJar(Path.of(javaHome, "bin", "java").toString(), jar, options);
        }

        @Override
        public String command(String... args) {
            List<String> words = new ArrayList<>();
            words.add(java);
            words.addAll(options);
            words.add("-jar");
            words.add(jar);
            words.addAll(List.of(args));
            return join(words);
        }
    }

    private static String join(List<String> words) {
        StringBuilder out = new StringBuilder();
        for (String w : words) {
            if (out.length() > 0) {
                out.append(' ');
            }
            out.append(Shell.quote(w));
        }
        return out.toString();
    }

    private static void requireText(String what, String value) {
        if (value == null || value.isBlank()) {
            throw new InvalidInputException(what + " path must not be empty");
        }
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                throw new InvalidInputException(what + " path contains a control character at position " + i);
            }
        }
    }
}
