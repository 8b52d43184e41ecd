package dev.fence.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.FencedWrites;
import dev.fence.core.Grant;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A writer killed between its synced temporary file and the rename leaves no torn file, and its lock file
 * (an OS lock, held by a process of its own here) holds other writers off until it dies.
 */
@Tag("process")
class SharedFilesCrashIT {
    static final String RESOURCE = "file:plan.md";

    @TempDir
    Path tmp;

    @Test
    void aWriterKilledBeforeItsRenameLeavesTheOldFileWholeAndHoldsTheLockUntilItDies() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("repo"));
        Path file = Files.writeString(root.resolve("plan.md"), "old content, whole\n");
        String storeUrl = "sqlite:" + tmp.resolve("store.db");
        try (LeaseStore store = Stores.open(storeUrl, StoreOptions.defaults())) {
            Grant g = ((LeaseService.AcquireOutcome.Acquired) new LeaseService(store, Clock.systemUTC())
                            .acquire(RESOURCE, "agent-A", Duration.ofMinutes(5), null))
                    .grant();
            String old = SharedFiles.read(root, file).sha256();
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    System.getProperty("java.class.path"),
                    PausingWriter.class.getName(),
                    storeUrl,
                    root.toString(),
                    file.toString(),
                    old,
                    RESOURCE,
                    g.holder(),
                    Long.toString(g.token()),
                    "new content that must never be seen torn\n".repeat(1000)));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("FENCE_PROOF", g.proof());
            Process child = pb.start();
            ExecutorService pool = Executors.newFixedThreadPool(1);
            try {
                BufferedReader out =
                        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                String line;
                StringBuilder seen = new StringBuilder();
                while ((line = out.readLine()) != null && !line.startsWith("READY ")) {
                    seen.append(line).append('\n');
                }
                assertTrue(line != null, "the child never reached the rename: " + seen);
                Path temp = Path.of(line.substring("READY ".length()));
                assertTrue(Files.exists(temp));
                assertEquals("old content, whole\n", Files.readString(file));

                // While the child holds the lock, a writer from the same hash waits.
                SharedFiles files = new SharedFiles(new FencedWrites(store, Clock.systemUTC()));
                Future<SharedFiles.Outcome> waiting = pool.submit(() -> files.write(new SharedFiles.Request(
                        root,
                        file,
                        "plan.md",
                        old,
                        "the survivor's content\n".getBytes(StandardCharsets.UTF_8),
                        RESOURCE,
                        g.holder(),
                        g.token(),
                        g.proof())));
                try {
                    waiting.get(1, TimeUnit.SECONDS);
                    throw new AssertionError("a second writer got past the lock the child holds");
                } catch (TimeoutException expected) {
                    // It waits for the lock.
                }

                child.destroyForcibly();
                assertTrue(child.waitFor(30, TimeUnit.SECONDS));
                // Killed at that point: the waiting writer gets the lock and finds the old file whole (its hash is
                // still the one it expected), so its write goes through; the child's content never landed.
                SharedFiles.Outcome after = waiting.get(30, TimeUnit.SECONDS);
                assertInstanceOf(SharedFiles.Outcome.Written.class, after, after.toString());
                assertEquals("the survivor's content\n", Files.readString(file));
            } finally {
                child.destroyForcibly();
                pool.shutdownNow();
            }
        }
    }
}
