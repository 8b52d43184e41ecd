package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The benchmark itself is too slow and noisy for CI; its command line is checked here. */
class BenchCommandTest {
    @Test
    void benchHelpParsesAndNamesItsOptions() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(
                InputStream.nullInputStream(),
                new PrintWriter(out, true),
                new PrintWriter(err, true),
                Map.of("HOME", "/nonexistent"),
                "bench",
                "--help");
        assertEquals(0, exit, err.toString());
        for (String option : new String[] {
            "--pushes",
            "--jdk17",
            "--jdk25",
            "--json",
            "--lease-seconds",
            "--verdicts",
            "--baseline-launcher",
            "--baseline-jar"
        }) {
            assertTrue(out.toString().contains(option), option + " missing from:\n" + out);
        }
    }

    @Test
    void aBaselineNeedsBothItsLauncherAndItsJarBeforeAnythingRuns() {
        StringWriter err = new StringWriter();
        int exit = Main.run(
                InputStream.nullInputStream(),
                new PrintWriter(new StringWriter(), true),
                new PrintWriter(err, true),
                Map.of("HOME", "/nonexistent"),
                "bench",
                "--baseline-jar",
                "/nonexistent/fence.jar");
        assertEquals(ExitCode.USAGE.code(), exit, err.toString());
        assertTrue(err.toString().contains("--baseline-launcher and --baseline-jar go together"), err.toString());

        err = new StringWriter();
        exit = Main.run(
                InputStream.nullInputStream(),
                new PrintWriter(new StringWriter(), true),
                new PrintWriter(err, true),
                Map.of("HOME", "/nonexistent"),
                "bench",
                "--baseline-launcher",
                "/nonexistent/fence",
                "--baseline-jar",
                "/nonexistent/fence.jar");
        assertEquals(ExitCode.USAGE.code(), exit, err.toString());
        assertTrue(err.toString().contains("/nonexistent/fence.jar"), err.toString());
    }

    @Test
    void outOfRangeCountsAreUsageErrorsBeforeAnythingRuns() {
        StringWriter err = new StringWriter();
        int exit = Main.run(
                InputStream.nullInputStream(),
                new PrintWriter(new StringWriter(), true),
                new PrintWriter(err, true),
                Map.of("HOME", "/nonexistent"),
                "bench",
                "--pushes",
                "0");
        assertEquals(ExitCode.USAGE.code(), exit, err.toString());
    }
}
