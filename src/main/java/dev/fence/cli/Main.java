package dev.fence.cli;

import dev.fence.install.HookJvm;
import dev.fence.store.Stores;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * The entry point. The only class that touches the real process: {@code System.in/out/err},
 * {@code System.getenv()}, the system clock and {@code System.exit}.
 */
public final class Main {
    private static final String INCLUDE_IN_EXCEPTIONS = "jdk.includeInExceptions";
    private static final String SLF4J_PROVIDER = "slf4j.provider";
    private static final String SLF4J_VERBOSITY = "slf4j.internal.verbosity";
    private static final String NATIVE_ACCESSORS = "jdk.reflect.useNativeAccessorOnly";

    private Main() {}

    public static void main(String[] args) throws Exception {
        PrintWriter out = new ProcessStreams.Out(System.out);
        // Not a lambda, as in HookRunner.storeOpener: a hook should reach its store thread before the JVM
        // links its first lambda.
        PrintWriter err = new ProcessStreams.Out(System.err, new BooleanSupplier() {
            @Override
            public boolean getAsBoolean() {
                return System.console() != null;
            }
        });
        Context ctx = new Context(
                new ProcessStreams.In(System.in),
                out,
                err,
                processEnv(),
                UtcMillisClock.INSTANCE,
                Path.of("").toAbsolutePath());
        // The training run starts only after the streams and the context are made, so that the archive holds
        // their classes too (copying the process environment loads classes of its own): a hook that loads
        // even one class from outside the archive opens the jar (milliseconds of parsing) or the JDK's image.
        boolean recorder = args.length == 2 && args[0].equals(Warmup.RUN_ARG);
        defaultProperties(recorder || (args.length >= 1 && args[0].equals("hook")));
        if (args.length >= 1 && args[0].equals(Warmup.ARG)) {
            out.flush();
            System.exit(Warmup.run(ctx.env(), java.util.List.of(args).subList(1, args.length)));
        }
        if (recorder) {
            // As processEnv does where git starts hooks without USER.
            new java.util.HashMap<>(System.getenv()).size();
            Warmup.runPlan(args[1]);
            return;
        }
        if (args.length >= 1 && args[0].equals("hook")) {
            // Set by the hooks fence install writes, which know the store they were installed for.
            Stores.preload(System.getProperty(HookJvm.STORE_HINT));
        }
        Integer hook = HookRunner.fastPath(ctx, args);
        if (hook != null) {
            out.flush();
            err.flush();
            // A hook registers no shutdown hooks, and its output is flushed: halt skips what exit would
            // still do. From JDK 21 that includes looking up a System.Logger to log the exit, whose backend
            // search reads the class path's service files: it opens the jar, milliseconds per push.
            Runtime.getRuntime().halt(hook);
        }
        int code = run(ctx, args);
        out.flush();
        err.flush();
        System.exit(code);
    }

    /**
     * Sets the system properties fence runs with, each unless the operator set it: they spare a process work
     * at start-up without changing what it does. The recording JVM of a training run sets them as a hook
     * does, so that the archive holds the classes a hook then loads.
     *
     * @param hook for a hook process (and the recording JVM), which also gets the settings that suit only a
     *     short-lived process
     */
    static void defaultProperties(boolean hook) {
        // SLF4J (sqlite-jdbc and Jedis log through it; the jar carries only its no-op binding) finds its
        // binding by a service lookup, which opens and indexes the whole jar; named, it is loaded as a class.
        // Its internal verbosity keeps it from announcing that on stderr, which a git host would show every
        // pusher.
        if (System.getProperty(SLF4J_PROVIDER) == null) {
            System.setProperty(SLF4J_PROVIDER, "org.slf4j.nop.NOPServiceProvider");
            if (System.getProperty(SLF4J_VERBOSITY) == null) {
                System.setProperty(SLF4J_VERBOSITY, "WARN");
            }
        }
        if (System.getProperty(INCLUDE_IN_EXCEPTIONS) == null) {
            // From JDK 25 the first socket reads this setting while initialising InetAddress, and without a
            // system property it loads the whole java.security file for it (milliseconds per hook). The
            // value is that file's default, so messages are the same either way.
            System.setProperty(INCLUDE_IN_EXCEPTIONS, "hostInfoExclSocket");
        }
        if (hook && System.getProperty(NATIVE_ACCESSORS) == null) {
            // From JDK 18 core reflection calls through method handles, and the first call in a process spins
            // a class for one (milliseconds in a hook, whose first socket reflects once, on the JDK's own enum
            // of operating systems). A process that reflects a handful of times is served as well by the JDK's
            // native accessors, which this selects; JDK 17 ignores it.
            System.setProperty(NATIVE_ACCESSORS, "true");
        }
    }

    /**
     * The process environment. Daemons and git servers often run without {@code USER}; the OS account
     * name is then supplied, so plain-git hooks can still name the pusher.
     */
    private static Map<String, String> processEnv() {
        Map<String, String> env = System.getenv();
        if (env.get("USER") == null && env.get("LOGNAME") == null) {
            env = new java.util.HashMap<>(env);
            env.put("USER", System.getProperty("user.name", "unknown"));
        }
        return env;
    }

    /** Runs fence with the given streams and environment; returns the exit code. For tests. */
    public static int run(InputStream in, PrintWriter out, PrintWriter err, Map<String, String> env, String... args) {
        return run(
                new Context(
                        in, out, err, env, UtcMillisClock.INSTANCE, Path.of("").toAbsolutePath()),
                args);
    }

    /** Runs fence in {@code ctx}; returns the exit code. */
    public static int run(Context ctx, String... args) {
        try {
            Integer hook = HookRunner.fastPath(ctx, args);
            if (hook != null) {
                return hook;
            }
            // Only here are picocli's classes loaded: Cli links them, Main must not (see Cli).
            return Cli.execute(ctx, args);
        } finally {
            ctx.out().flush();
            ctx.err().flush();
        }
    }

    /** The configured command tree (for tests and the documentation generator). */
    static picocli.CommandLine commandLine(Context ctx) {
        return Cli.commandLine(ctx);
    }
}
