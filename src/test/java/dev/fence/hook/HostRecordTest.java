package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.AcceptedMark;
import dev.fence.core.Digests;
import dev.fence.core.StoreUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The repository's record of accepted tokens, on real files. */
class HostRecordTest {
    private static final String MAIN = "git:r:refs/heads/main";
    private static final String DEV = "git:r:refs/heads/dev";

    @TempDir
    Path gitDir;

    private HostRecord lock() {
        return HostRecord.lock(gitDir, System.nanoTime() + 1_000_000_000L, Digests.jce());
    }

    private Path markFile() throws IOException {
        try (Stream<Path> files = Files.walk(gitDir.resolve("fence").resolve("accepted"))) {
            return files.filter(f -> Files.isRegularFile(f) && !f.toString().endsWith(".tmp"))
                    .findFirst()
                    .orElseThrow();
        }
    }

    @Test
    void aMarkGoesUpAndNeverDown() {
        try (HostRecord r = lock()) {
            assertEquals(Map.of(), r.read(List.of(MAIN, DEV)));
            r.raise(List.of(new AcceptedMark(MAIN, 7, "agent-a"), new AcceptedMark(DEV, 3, null)));
        }
        try (HostRecord r = lock()) {
            assertEquals(
                    Map.of(MAIN, new AcceptedMark(MAIN, 7, "agent-a"), DEV, new AcceptedMark(DEV, 3, null)),
                    r.read(List.of(MAIN, DEV)));
            r.raise(List.of(new AcceptedMark(MAIN, 5, "agent-b")));
        }
        try (HostRecord r = lock()) {
            assertEquals(Map.of(MAIN, new AcceptedMark(MAIN, 7, "agent-a")), r.read(List.of(MAIN)));
        }
    }

    @Test
    void aDamagedMarkIsRefusedNeverTakenAsNoMark() throws IOException {
        try (HostRecord r = lock()) {
            r.raise(List.of(new AcceptedMark(MAIN, 7, "agent-a")));
        }
        Path file = markFile();
        for (byte[] damage :
                List.of("v1 seven agent-a git:r:refs/heads/main\n".getBytes(), new byte[0], new byte[70_000])) {
            Files.write(file, damage);
            try (HostRecord r = lock()) {
                StoreUnavailableException e =
                        assertThrows(StoreUnavailableException.class, () -> r.read(List.of(MAIN)));
                assertTrue(e.getMessage().contains("is damaged"), e.getMessage());
            }
        }
    }

    @Test
    void aMarkThatCannotBeReadIsRefused() throws IOException {
        try (HostRecord r = lock()) {
            r.raise(List.of(new AcceptedMark(MAIN, 7, "agent-a")));
        }
        Path file = markFile();
        Files.delete(file);
        Files.createDirectory(file);
        try (HostRecord r = lock()) {
            assertThrows(StoreUnavailableException.class, () -> r.read(List.of(MAIN)));
        }
    }
}
