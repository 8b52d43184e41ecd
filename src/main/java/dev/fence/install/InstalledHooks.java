package dev.fence.install;

import dev.fence.hookpath.JvmSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The hook files {@link BareRepoInstaller} writes, read back: where fence's file for a hook is, how it
 * starts fence, and what {@code fence install} would write in its place today. The inverse of {@link
 * HookScripts}, kept beside it so that the two change together; {@code fence doctor} compares the two.
 */
public final class InstalledHooks {
    /** The hooks {@code fence install --bare} writes (post-receive only with {@code --record-landed}). */
    public static final List<String> HOOKS = List.of("pre-receive", "post-receive");

    private InstalledHooks() {}

    /**
     * fence's file for {@code hook} in {@code hooks} (the directory git runs hooks from): {@code
     * <hook>.d/fence} when it carries fence's marker, else {@code <hook>} when it does; empty when fence
     * wrote neither.
     */
    public static Optional<Path> locate(Path hooks, String hook) {
        for (Path candidate : List.of(hooks.resolve(hook + ".d").resolve("fence"), hooks.resolve(hook))) {
            if (Files.isRegularFile(candidate) && HookScripts.isOurs(FilePlan.read(candidate))) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /**
     * What {@code fence install} writes today for a {@code hook} file that starts fence as {@code content}
     * does: the curl shim byte for byte, or the Java hook for the launch its command line names. Empty when
     * {@code content} starts fence in no way the installer writes (its command line was edited away).
     */
    public static Optional<String> expected(String hook, String content) {
        if (isShim(content)) {
            return Optional.of(HookScripts.curlShim());
        }
        return launch(hook, content)
                .map(l -> hook.equals("post-receive") ? HookScripts.postReceive(l) : HookScripts.preReceive(l));
    }

    /** True when {@code content} is (or was) the curl shim, which reads {@value HookScripts#SHIM_CONF}. */
    public static boolean isShim(String content) {
        return content.contains(HookScripts.SHIM_CONF) && !content.contains(JvmSettings.MAIN);
    }

    /** How a Java hook file starts fence, read from its command lines; empty when they are not fence's. */
    public static Optional<Launch> launch(String hook, String content) {
        List<String> command = null;
        String javaHome = null;
        String jar = null;
        String archive = null;
        String version = null;
        String pinnedJava = null;
        String pinnedJar = null;
        for (String line : content.split("\n", -1)) {
            if (line.startsWith("FENCE_JAVA=") && line.endsWith("; export FENCE_JAVA")) {
                pinnedJava =
                        one(line.substring("FENCE_JAVA=".length(), line.length() - "; export FENCE_JAVA".length()));
            } else if (line.startsWith("FENCE_JAR=") && line.endsWith("; export FENCE_JAR")) {
                pinnedJar = one(line.substring("FENCE_JAR=".length(), line.length() - "; export FENCE_JAR".length()));
            } else if (line.startsWith("exec ")) {
                command = words(line.substring("exec ".length()));
            } else if (line.contains(" || echo \"fence: could not record")) {
                command = words(line.substring(0, line.indexOf(" || echo ")));
            } else if (line.startsWith("java_home=")) {
                javaHome = one(line.substring("java_home=".length()));
            } else if (line.startsWith("jar=")) {
                jar = one(line.substring("jar=".length()));
            } else if (line.startsWith("archive=")) {
                archive = one(line.substring("archive=".length()));
            } else if (line.startsWith("if [ \"$jdk\" = ") && line.endsWith(" ]; then")) {
                String release = one(line.substring("if [ \"$jdk\" = ".length(), line.length() - " ]; then".length()));
                if (release != null && release.startsWith("JAVA_VERSION=\"") && release.endsWith("\"")) {
                    version = release.substring("JAVA_VERSION=\"".length(), release.length() - 1);
                }
            }
        }
        if (command == null || command.size() < 3) {
            return Optional.empty();
        }
        List<String> tail = command.subList(command.size() - 2, command.size());
        if (!tail.equals(List.of("hook", hook))) {
            return Optional.empty();
        }
        List<String> start = command.subList(0, command.size() - 2);
        try {
            if (start.size() == 1) {
                // The launcher's java and jar, as the pins ahead of the command line name them.
                Launch.Launcher launcher = new Launch.Launcher(start.get(0), pinnedJava, pinnedJar);
                if (javaHome == null) {
                    return Optional.of(launcher);
                }
                if (jar == null || archive == null || version == null) {
                    return Optional.empty();
                }
                for (String kind : Arrays.asList(null, "sqlite", "redis")) {
                    Launch.Direct d = new Launch.Direct(launcher, javaHome, version, jar, kind);
                    if (d.archive().equals(archive)) {
                        return Optional.of(d);
                    }
                }
                return Optional.empty();
            }
            int dashJar = start.indexOf("-jar");
            if (dashJar > 0 && dashJar == start.size() - 2) {
                return Optional.of(new Launch.JavaJar(start.get(0), start.get(dashJar + 1)));
            }
        } catch (RuntimeException e) {
            // A path fence would refuse to write (empty, control characters): not a launch of fence's.
            return Optional.empty();
        }
        return Optional.empty();
    }

    private static String one(String text) {
        List<String> w = words(text);
        return w.size() == 1 ? w.get(0) : null;
    }

    /**
     * The words of a POSIX shell command line as {@link Shell#quote} writes them: plain words, single-quoted
     * words, {@code '\''} for a quote inside one, and double-quoted words without expansions.
     */
    static List<String> words(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder word = null;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == ' ' || c == '\t') {
                if (word != null) {
                    out.add(word.toString());
                    word = null;
                }
                continue;
            }
            if (word == null) {
                word = new StringBuilder();
            }
            if (c == '\'') {
                int end = line.indexOf('\'', i + 1);
                if (end < 0) {
                    return List.of();
                }
                word.append(line, i + 1, end);
                i = end;
            } else if (c == '"') {
                int end = line.indexOf('"', i + 1);
                if (end < 0) {
                    return List.of();
                }
                word.append(line, i + 1, end);
                i = end;
            } else if (c == '\\' && i + 1 < line.length()) {
                word.append(line.charAt(++i));
            } else {
                word.append(c);
            }
        }
        if (word != null) {
            out.add(word.toString());
        }
        return out;
    }
}
