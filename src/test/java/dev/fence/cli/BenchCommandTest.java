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

    /** Exit code and standard error of {@code fence bench args}. */
    private record Run(int exit, String err) {}

    private static Run bench(String... args) {
        StringWriter err = new StringWriter();
        String[] all = new String[args.length + 1];
        all[0] = "bench";
        System.arraycopy(args, 0, all, 1, args.length);
        int exit = Main.run(
                InputStream.nullInputStream(),
                new PrintWriter(new StringWriter(), true),
                new PrintWriter(err, true),
                Map.of("HOME", "/nonexistent"),
                all);
        return new Run(exit, err.toString());
    }

    @Test
    void aBaselineNeedsBothItsLauncherAndItsJarBeforeAnythingRuns() {
        Run r = bench("--baseline-jar", "/nonexistent/fence.jar");
        assertEquals(ExitCode.USAGE.code(), r.exit(), r.err());
        assertTrue(r.err().contains("--baseline-launcher and --baseline-jar go together"), r.err());

        r = bench("--baseline-launcher", "/nonexistent/fence", "--baseline-jar", "/nonexistent/fence.jar");
        assertEquals(ExitCode.USAGE.code(), r.exit(), r.err());
        assertTrue(r.err().contains("/nonexistent/fence.jar"), r.err());
    }

    @Test
    void outOfRangeCountsAreUsageErrorsBeforeAnythingRuns() {
        Run r = bench("--pushes", "0");
        assertEquals(ExitCode.USAGE.code(), r.exit(), r.err());
    }
}
