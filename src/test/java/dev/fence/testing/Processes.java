package dev.fence.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Runs a command the way an administrator's shell would, for tests of the built jar and the release archive. */
public final class Processes {
    private Processes() {}

    /** What one run printed and how it ended. */
    public record Run(int exit, String out, String err) {}

    /**
     * Runs {@code command} in {@code dir} with exactly {@code env} and empty standard input; fails the test
     * after 300 s.
     */
    public static Run run(List<String> command, Map<String, String> env, Path dir)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        Stdin.feed(p, "");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + command);
        }
        return new Run(p.exitValue(), out, err);
    }

    /**
     * The URL a {@code fence serve} process prints ({@code listening on URL}) to {@code out}, without a
     * trailing slash; fails the test when the process exits first or 60 s pass.
     */
    public static String listeningOn(Process server, Path out, Path err) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        Pattern listening = Pattern.compile("listening on (http://\\S+)");
        while (true) {
            Matcher m = listening.matcher(Files.readString(out));
            if (m.find()) {
                return m.group(1).replaceAll("/$", "");
            }
            if (!server.isAlive()) {
                throw new AssertionError("fence serve exited: " + Files.readString(err));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("fence serve did not start: " + Files.readString(err));
            }
            Thread.sleep(50);
        }
    }
}
