package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerQuery;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.ProcessTest;
import dev.fence.testing.TestLauncher;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fence serve --warm-up}: the server answers from its start while the warm-up runs beside it, the warm-up
 * leaves nothing in the real store or in the temporary directory, and a stop during it removes its scratch
 * directory too.
 */
@ProcessTest
class ServeWarmupTest {
    @TempDir
    Path tmp;

    private Path scratchParent;
    private Path credentials;

    @BeforeEach
    void setUp() throws IOException {
        scratchParent = Files.createDirectories(tmp.resolve("java-tmp"));
        credentials = Files.writeString(tmp.resolve("credentials"), "");
    }

    private Process serve(String store, String warmUp) throws IOException {
        Path launcher = TestLauncher.write(tmp.resolve("bin/fence"));
        ProcessBuilder pb = new ProcessBuilder(
                        launcher.toString(),
                        "serve",
                        "--listen",
                        "127.0.0.1:0",
                        "--credentials",
                        credentials.toString(),
                        "--store",
                        store,
                        "--warm-up",
                        warmUp)
                .redirectOutput(tmp.resolve("out").toFile())
                .redirectError(tmp.resolve("err").toFile());
        // Where the JVM makes its temporary directories: the warm-up's scratch directory goes here.
        pb.environment().put("JAVA_TOOL_OPTIONS", "-Djava.io.tmpdir=" + scratchParent);
        return pb.start();
    }

    private void awaitLine(Process serve, Path file, String text) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (!Files.readString(file).contains(text)) {
            assertTrue(serve.isAlive(), "serve exited: " + Files.readString(tmp.resolve("err")));
            assertTrue(System.nanoTime() < deadline, "no '" + text + "' in " + Files.readString(file));
            Thread.sleep(50);
        }
    }

    private List<Path> leftInScratchParent() throws IOException {
        try (Stream<Path> files = Files.list(scratchParent)) {
            return files.filter(p -> p.getFileName().toString().startsWith("fence-serve-warm-up"))
                    .toList();
        }
    }

    @Test
    void theWarmUpTouchesNeitherTheRealStoreNorLeavesItsScratchDirectory() throws Exception {
        // One a killed server left two hours ago is removed; one of a server that may still be warming is not.
        Path killed = Files.createDirectories(scratchParent.resolve("fence-serve-warm-up-killed"));
        Files.writeString(killed.resolve("warm-up.db"), "x");
        Files.setLastModifiedTime(killed, FileTime.from(Instant.now().minus(Duration.ofHours(2))));
        Path recent = Files.createDirectories(scratchParent.resolve("fence-serve-warm-up-recent"));
        String store = "sqlite:" + tmp.resolve("real.db");
        Process serve = serve(store, "300");
        try {
            awaitLine(serve, tmp.resolve("out"), "listening on");
            awaitLine(serve, tmp.resolve("err"), "fence serve: warmed the verdict path with 300 verdicts");
            assertEquals(List.of(recent), leftInScratchParent());
            try (LeaseStore real = Stores.open(store, StoreOptions.defaults())) {
                assertEquals(List.of(), real.query(LedgerQuery.all()), "no warm-up verdict in the real ledger");
            }
            assertFalse(Files.readString(credentials).contains("warm-up"), "nor a credential in the real file");
            assertFalse(Files.readString(tmp.resolve("err")).contains("caller=warm-up"), "nor a real request");
        } finally {
            serve.destroy();
            assertTrue(serve.waitFor(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aWarmUpBeyondItsBoundsIsAUsageError() {
        for (String n : List.of("-1", "100001")) {
            StringWriter err = new StringWriter();
            int exit = Main.run(
                    new Context(
                            new ByteArrayInputStream(new byte[0]),
                            new PrintWriter(new StringWriter()),
                            new PrintWriter(err),
                            Map.of("HOME", tmp.toString()),
                            Clock.systemUTC(),
                            tmp),
                    "serve",
                    "--credentials",
                    credentials.toString(),
                    "--warm-up",
                    n);
            assertEquals(ExitCode.USAGE.code(), exit, err.toString());
            assertTrue(err.toString().contains("--warm-up must be from 0 to 100000 verdicts"), err.toString());
        }
    }

    @Test
    void aStopDuringTheWarmUpRemovesItsScratchDirectory() throws Exception {
        Process serve = serve("sqlite:" + tmp.resolve("real.db"), "100000");
        try {
            awaitLine(serve, tmp.resolve("out"), "listening on");
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (leftInScratchParent().isEmpty()) {
                assertTrue(System.nanoTime() < deadline, "the warm-up made no scratch directory");
                Thread.sleep(20);
            }
            Thread.sleep(1000);
        } finally {
            serve.destroy();
            assertTrue(serve.waitFor(30, TimeUnit.SECONDS));
        }
        assertEquals(List.of(), leftInScratchParent());
        assertFalse(Files.readString(tmp.resolve("err")).contains("warmed the verdict path"));
    }
}
