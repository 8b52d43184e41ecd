package dev.fence.hookpath;

import dev.fence.store.Stores;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The process entry: the only code that touches the real process ({@code System.in/out/err}, {@code
 * System.getenv()}, {@code System.exit} and {@code Runtime.halt}). It reads the environment once, applies
 * {@link JvmSettings}, and runs a hook ({@link HookRunner#fastPath}) or a training run ({@link
 * ArchiveTraining}) itself; everything else it hands back to the command line ({@code dev.fence.cli.Main})
 * as a {@link Started}.
 */
public final class ProcessEntry {
    private ProcessEntry() {}

    /**
     * What the command line gets of the process.
     *
     * @param in standard input
     * @param out standard output
     * @param err standard error
     * @param env the environment, read once
     * @param clock the clock
     * @param cwd the working directory
     */
    public record Started(
            InputStream in, PrintStream out, PrintStream err, Map<String, String> env, Clock clock, Path cwd) {
        /** Ends the process with {@code code}. */
        public void exit(int code) {
            out.flush();
            err.flush();
            System.exit(code);
        }
    }

    /**
     * Starts the process for {@code args}: runs a hook or a training run to the end of the process, or
     * returns what any other command needs.
     */
    public static Started start(String[] args) throws Exception {
        Map<String, String> env = processEnv();
        boolean recorder = args.length == 2 && args[0].equals(ArchiveTraining.RUN_ARG);
        boolean hook = args.length >= 1 && args[0].equals("hook");
        JvmSettings.applyProperties(recorder || hook);
        Path cwd = Path.of("").toAbsolutePath();
        if (args.length >= 1 && args[0].equals(ArchiveTraining.ARG)) {
            System.exit(ArchiveTraining.run(env, List.of(args).subList(1, args.length)));
        }
        if (recorder) {
            ArchiveTraining.runPlan(args[1]);
            // Ends as a hook ends: System.exit would load what a hook never does (from JDK 21 it looks up a
            // System.Logger to log the exit), and the archive would hold it.
            Runtime.getRuntime().halt(0);
        }
        if (hook) {
            // Set by the hooks fence install writes, which know the store they were installed for.
            Stores.preload(System.getProperty(JvmSettings.STORE_HINT));
            PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
            Integer code =
                    HookRunner.fastPath(new HookRunner.Io(System.in, err, env, UtcMillisClock.INSTANCE, cwd), args);
            if (code != null) {
                err.flush();
                // A hook registers no shutdown hooks, and its output is flushed: halt skips what exit would
                // still do. From JDK 21 that includes looking up a System.Logger to log the exit, whose
                // backend search reads the class path's service files: it opens the jar, milliseconds per
                // push. Bench: "Java hook" rows, JDK 25.
                Runtime.getRuntime().halt(code);
            }
        }
        return new Started(System.in, System.out, System.err, env, UtcMillisClock.INSTANCE, cwd);
    }

    /**
     * The process environment. Daemons and git servers often run without {@code USER}; the OS account name
     * is then supplied, so plain-git hooks can still name the pusher.
     */
    private static Map<String, String> processEnv() {
        Map<String, String> env = System.getenv();
        if (env.get("USER") == null && env.get("LOGNAME") == null) {
            env = new HashMap<>(env);
            env.put("USER", System.getProperty("user.name", "unknown"));
        }
        return env;
    }
}
