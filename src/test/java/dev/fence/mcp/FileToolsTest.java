package dev.fence.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code read_file}'s path argument as a model might spell it, on real files. */
class FileToolsTest {
    @TempDir
    Path tmp;

    private ToolResult read(Path root, String path) {
        FenceTools.Extra tool = FileTools.of(root, null, null).get(0);
        return tool.call(Map.of("path", path), null);
    }

    @Test
    void aPathOutsideTheRootOrNoPathAtAllIsABadArgumentNotAnInternalError() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Files.writeString(tmp.resolve("secret"), "keep out\n");
        Files.createSymbolicLink(root.resolve("out"), tmp);
        for (String p : List.of("../secret", tmp.resolve("secret").toString(), "out/secret", "a\u0000b", ".")) {
            ToolResult r = read(root, p);
            assertTrue(r.error(), p + ": " + r.text());
            assertEquals("invalid", r.structured().get("error"), p + ": " + r.text());
            assertFalse(r.text().contains("keep out"), r.text());
        }
        assertEquals("path", read(root, "a\u0000b").structured().get("argument"));
    }

    /**
     * The server's root is pinned when it starts: an agent that renames its root away and puts a link to
     * another agent's clone (or another directory) at its name reads nothing there, though no name below
     * the root was swapped.
     */
    @Test
    void aRootMovedAwayAndReplacedIsNotFollowed() throws Exception {
        Path mine = Files.createDirectories(tmp.resolve("agent-a/clone"));
        Path theirs = Files.createDirectories(tmp.resolve("agent-b/clone"));
        Files.writeString(mine.resolve("notes.txt"), "agent-a's notes\n");
        Files.writeString(theirs.resolve("notes.txt"), "agent-b's notes\n");
        FenceTools.Extra tool = FileTools.of(mine, null, null).get(0);
        assertTrue(tool.call(Map.of("path", "notes.txt"), null).text().contains("agent-a's notes"));

        Files.move(mine, tmp.resolve("agent-a/clone.real"));
        Files.createSymbolicLink(mine, theirs);
        ToolResult viaLink = tool.call(Map.of("path", "notes.txt"), null);
        assertTrue(viaLink.error(), viaLink.text());
        assertTrue(viaLink.text().contains("was moved or replaced since fence started"), viaLink.text());
        assertFalse(viaLink.text().contains("agent-b's notes"), viaLink.text());

        Files.delete(mine);
        Files.move(theirs, mine);
        ToolResult moved = tool.call(Map.of("path", "notes.txt"), null);
        assertTrue(moved.error(), moved.text());
        assertFalse(moved.text().contains("agent-b's notes"), moved.text());
    }

    /** A file too large to return is a bad argument, answered at once (it used to end the server's thread). */
    @Test
    void aFileTooLargeToReturnIsABadArgument() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        try (var f = new java.io.RandomAccessFile(root.resolve("huge.bin").toFile(), "rw")) {
            f.setLength(3L << 30);
        }
        ToolResult r = read(root, "huge.bin");
        assertTrue(r.error(), r.text());
        assertEquals("invalid", r.structured().get("error"), r.text());
        assertTrue(r.text().contains("16 MiB"), r.text());
    }
}
