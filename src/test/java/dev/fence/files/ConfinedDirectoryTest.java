package dev.fence.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.InvalidInputException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The directory of a shared file, used after a directory on the way was swapped for a link to another. */
class ConfinedDirectoryTest {
    static final Set<StandardOpenOption> CREATE = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);

    @TempDir
    Path tmp;

    Path root;
    Path sub;
    Path outside;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectories(tmp.resolve("repo")).toRealPath();
        sub = Files.createDirectories(root.resolve("sub"));
        Files.writeString(sub.resolve("inside.txt"), "inside\n");
        outside = Files.createDirectories(tmp.resolve("outside"));
        Files.writeString(outside.resolve("inside.txt"), "outside the root\n");
    }

    static void write(FileChannel ch, String s) throws IOException {
        try (ch) {
            ch.write(ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** The handle keeps to the directory opened: what is created goes there, and it knows it was moved. */
    @Test
    void theOpenDirectoryIsUsedWhereverItsPathNowLeads() throws IOException {
        try (ConfinedDirectory dir = ConfinedDirectory.open(root, null, sub)) {
            Path moved = SharedFilesTest.swapForLink(sub, outside);
            write(dir.open("new.txt", CREATE), "x");
            dir.rename("new.txt", "inside.txt");
            assertEquals("x", Files.readString(moved.resolve("inside.txt")));
            assertEquals("outside the root\n", Files.readString(outside.resolve("inside.txt")));
            assertEquals(List.of("inside.txt"), SharedFilesTest.names(outside));
            InvalidInputException e =
                    assertThrows(InvalidInputException.class, () -> dir.checkStillAtItsPath("nothing was written"));
            assertTrue(e.getMessage().contains("moved or replaced"), e.getMessage());
        }
    }

    @Test
    void aLinkOnTheWayIsRefusedWhenTheDirectoryIsOpened() throws IOException {
        Path deeper = Files.createDirectories(sub.resolve("deeper"));
        SharedFilesTest.swapForLink(sub, outside);
        InvalidInputException e =
                assertThrows(InvalidInputException.class, () -> ConfinedDirectory.open(root, null, deeper));
        assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
    }

    /** Without a directory stream to hold: every step checks the path first, and refuses once it moved. */
    @Test
    void byPathEveryStepIsRefusedOnceTheDirectoryWasSwapped() throws IOException {
        try (ConfinedDirectory dir = ConfinedDirectory.openByPath(sub)) {
            write(dir.open("new.txt", CREATE), "x");
            Path moved = SharedFilesTest.swapForLink(sub, outside);
            for (ThrowingStep step : List.<ThrowingStep>of(
                    () -> dir.attributes("inside.txt"),
                    () -> dir.open("evil.txt", CREATE).close(),
                    () -> dir.open("inside.txt", Set.of(StandardOpenOption.READ))
                            .close(),
                    () -> dir.rename("new.txt", "inside.txt"),
                    () -> dir.setPermissions("inside.txt", Set.of()),
                    () -> dir.deleteIfExists("inside.txt"),
                    dir::sync)) {
                assertInstanceOf(InvalidInputException.class, assertThrows(Exception.class, step::run));
            }
            assertEquals(List.of("inside.txt"), SharedFilesTest.names(outside));
            assertEquals("outside the root\n", Files.readString(outside.resolve("inside.txt")));
            assertEquals(List.of("inside.txt", "new.txt"), SharedFilesTest.names(moved));
            assertFalse(Files.exists(moved.resolve("evil.txt")));
        }
    }

    interface ThrowingStep {
        void run() throws Exception;
    }
}
