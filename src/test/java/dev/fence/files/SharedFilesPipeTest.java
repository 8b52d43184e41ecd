package dev.fence.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.FencedWrites;
import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import dev.fence.testing.ProcessTest;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A named pipe in the root (one {@code mkfifo} by an agent with a shell) would block a read for ever, and
 * with it every later tool call of {@code fence mcp}, which serves calls one at a time; a write reads the
 * file before it replaces it, so it would block too.
 */
@ProcessTest
class SharedFilesPipeTest {
    @TempDir
    Path tmp;

    @Test
    void aNamedPipeInTheRootIsRefusedAtOnceNotWaitedOn() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("repo"));
        Path fifo = root.resolve("pipe");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (LeaseStore store = Stores.open(
                "sqlite:" + tmp.resolve("store.db"), StoreOptions.defaults().withCallerClock())) {
            FakeClock clock = new FakeClock(Instant.parse("2026-12-01T14:26:10Z"));
            Grant g = ((LeaseService.AcquireOutcome.Acquired)
                            new LeaseService(store, clock).acquire("file:pipe", "agent-A", Duration.ofMinutes(5), null))
                    .grant();
            Future<?> read = pool.submit(() -> SharedFiles.read(root, fifo));
            ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(10, TimeUnit.SECONDS));
            assertInstanceOf(InvalidInputException.class, e.getCause());
            assertTrue(
                    e.getCause().getMessage().contains("not a regular file"),
                    e.getCause().getMessage());
            SharedFiles.Request w = new SharedFiles.Request(
                    root,
                    fifo,
                    "pipe",
                    SharedFiles.sha256(new byte[0]),
                    "x".getBytes(StandardCharsets.UTF_8),
                    "file:pipe",
                    g.holder(),
                    g.token(),
                    g.proof());
            Future<?> write = pool.submit(() -> new SharedFiles(new FencedWrites(store, clock)).write(w));
            e = assertThrows(ExecutionException.class, () -> write.get(10, TimeUnit.SECONDS));
            assertInstanceOf(InvalidInputException.class, e.getCause());
        } finally {
            // A read still blocked in open(2) is freed by a writer; O_RDWR opens a pipe without waiting.
            pool.shutdownNow();
            try (var unblock = FileChannel.open(fifo, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                unblock.force(false);
            } catch (IOException ignored) {
                // already gone
            }
        }
    }
}
