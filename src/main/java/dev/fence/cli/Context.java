package dev.fence.cli;

import dev.fence.store.StoreOptions;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;

/**
 * The process's outside world, handed to every command: streams, environment, clock and working
 * directory. Only {@link Main#main} builds one from the real process; tests build their own.
 *
 * @param in standard input
 * @param out standard output
 * @param err standard error
 * @param env the environment
 * @param clock the clock
 * @param cwd the working directory
 * @param storeDefaults the options stores are opened with where a URL says nothing; a test whose fake
 *     clock must decide lease expiry sets {@link StoreOptions#callerClock()} here (no URL or flag can)
 */
public record Context(
        InputStream in,
        PrintWriter out,
        PrintWriter err,
        Map<String, String> env,
        Clock clock,
        Path cwd,
        StoreOptions storeDefaults) {
    public Context {
        env = Map.copyOf(env);
    }

    /** A context whose stores keep their own clocks (every real process). */
    public Context(InputStream in, PrintWriter out, PrintWriter err, Map<String, String> env, Clock clock, Path cwd) {
        this(in, out, err, env, clock, cwd, StoreOptions.defaults());
    }
}
