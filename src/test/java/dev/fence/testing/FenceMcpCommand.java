package dev.fence.testing;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How the tests start {@code fence mcp} as a child process, the way an agent harness does: this JVM's
 * {@code java} on the built jar ({@code -Dfence.jar}, else {@code target/fence.jar}), for agent-a on repo
 * {@code app}. One place, so that every MCP test runs the server the same way.
 */
public final class FenceMcpCommand {
    private FenceMcpCommand() {}

    /** This JVM's {@code java} executable, which runs the server. */
    public static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** The arguments after {@link #java()}: {@code fence mcp} for agent-a on {@code store}, working in {@code clone}. */
    public static List<String> args(String store, Path clone, String... more) {
        List<String> args = new ArrayList<>(List.of(
                "-XX:TieredStopAtLevel=1",
                "-jar",
                System.getProperty("fence.jar", "target/fence.jar"),
                "mcp",
                "--holder",
                "agent-a",
                "--store",
                store,
                "--repo",
                "app",
                "--clone",
                clone.toString()));
        args.addAll(List.of(more));
        return args;
    }

    /** {@link #java()} followed by {@link #args}: the whole command line. */
    public static List<String> command(String store, Path clone, String... more) {
        List<String> command = new ArrayList<>();
        command.add(java());
        command.addAll(args(store, clone, more));
        return command;
    }
}
