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
            "--baseline-jar",
            "--scale",
            "--quick",
            "--postgres",
            "--scale-stores",
            "--scale-rows",
            "--plot",
            "--from"
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

    @Test
    void scaleOptionsAreCheckedBeforeAnythingRuns() {
        Run r = bench("--quick");
        assertEquals(ExitCode.USAGE.code(), r.exit(), r.err());
        assertTrue(r.err().contains("go with --scale"), r.err());

        r = bench("--scale", "--scale-stores", "sqlite,mysql");
        assertEquals(ExitCode.USAGE.code(), r.exit(), r.err());
        assertTrue(r.err().contains("unknown store 'mysql'"), r.err());

        r = bench("--scale", "--scale-rows", "store,everything");
        assertEquals(ExitCode.USAGE.code(), r.exit(), r.err());
        assertTrue(r.err().contains("unknown group of rows 'everything'"), r.err());

        r = bench("--scale-rows", "concurrency");
        assertEquals(ExitCode.USAGE.code(), r.exit(), r.err());
        assertTrue(r.err().contains("go with --scale"), r.err());

        r = bench("--scale", "--postgres", "mysql://root@127.0.0.1/x");
        assertEquals(ExitCode.USAGE.code(), r.exit(), r.err());
        assertTrue(r.err().contains("--postgres must be postgresql://"), r.err());

        r = bench("--from", "/nonexistent/scale.json");
        assertEquals(ExitCode.USAGE.code(), r.exit(), r.err());
        assertTrue(r.err().contains("--from goes with --plot"), r.err());
    }

    @Test
    void plotFromJsonWritesTheSvgWithoutRunningAnything(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path json = dir.resolve("scale.json");
        java.nio.file.Files.writeString(
                json,
                "{\"machine\":{\"date\":\"2026-12-03T08:00:00Z\"},\"storeSize\":["
                        + "{\"store\":\"redis\",\"leases\":1,\"events\":0,\"verdictRatio\":1.0},"
                        + "{\"store\":\"redis\",\"leases\":100000,\"events\":1000000,\"verdictRatio\":1.04}],"
                        + "\"refsPerPush\":[{\"store\":\"redis\",\"refs\":10000,\"perFencedRefMs\":0.05}]}");
        java.nio.file.Path svg = dir.resolve("scale.svg");
        Run r = bench("--plot", svg.toString(), "--from", json.toString());
        assertEquals(0, r.exit(), r.err());
        String text = java.nio.file.Files.readString(svg);
        assertTrue(text.contains("100k / 1M") && text.contains("2026-12-03 08:00 UTC"), text);
    }
}
