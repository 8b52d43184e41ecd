package dev.fence.cli;

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
 */
public record Context(
        InputStream in, PrintWriter out, PrintWriter err, Map<String, String> env, Clock clock, Path cwd) {
    public Context {
        env = Map.copyOf(env);
    }
}
