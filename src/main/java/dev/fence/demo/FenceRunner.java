package dev.fence.demo;

import java.nio.file.Path;
import java.util.Map;

/**
 * Runs one fence command in this process, as a user would type it, and captures what it printed. The
 * composition root supplies it, so the demo drives the very commands users run without depending on
 * the command-line layer.
 */
@FunctionalInterface
public interface FenceRunner {
    /** What one command did: its exit code and everything it printed. */
    record Result(int exit, String out, String err) {}

    /**
     * Runs {@code fence args…} with empty standard input.
     *
     * @param env the command's whole environment
     * @param cwd its working directory
     */
    Result run(Map<String, String> env, Path cwd, String... args);
}
