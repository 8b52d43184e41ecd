package dev.fence.integrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.ConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files a JSON reader can read but not round-trip: merged, they would lose what the reader dropped, so
 * they are refused like any malformed file and left as they are.
 */
class ClaudeCodeFilesTest {
    @TempDir
    Path project;

    private static final ClaudeCodeFiles.Options OPTIONS =
            new ClaudeCodeFiles.Options("fence", List.of(), "agent-a", "app", "5m", "/home/a/.fence/grants/agent-a");

    @Test
    void aDuplicateKeyOrTextAfterTheObjectIsRefusedAndTheFileIsLeftAsItIs() throws Exception {
        Path settings = Files.createDirectories(project.resolve(".claude")).resolve("settings.json");
        Path mcp = project.resolve(".mcp.json");
        for (String text : List.of(
                "{\"env\": {\"A\": \"1\"}, \"env\": {\"B\": \"2\"}}\n",
                "{\"permissions\": {\"allow\": []}}\n{\"env\": {\"X\": \"1\"}}\n",
                "{\"model\": \"opus\"}\n}\n")) {
            for (Path file : List.of(settings, mcp)) {
                Files.deleteIfExists(settings);
                Files.deleteIfExists(mcp);
                Files.writeString(file, text);
                ConfigException e = assertThrows(
                        ConfigException.class,
                        () -> ClaudeCodeFiles.apply(ClaudeCodeFiles.plan(project, OPTIONS, false)),
                        file + ": " + text);
                assertTrue(e.getMessage().contains("is not a JSON object"), e.getMessage());
                assertEquals(text, Files.readString(file));
            }
        }
    }

    /**
     * A project's settings file is often a link to one shared by several projects, and readable by the
     * team: merging must write the file the link points to, and keep its mode.
     */
    @Test
    void aLinkedSettingsFileIsMergedWhereItPointsAndKeepsItsMode() throws Exception {
        Path shared = Files.writeString(project.resolve("shared-settings.json"), "{\"model\": \"opus\"}\n");
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rw-r--r--"));
        Path settings = Files.createDirectories(project.resolve(".claude")).resolve("settings.json");
        Files.createSymbolicLink(settings, shared);
        ClaudeCodeFiles.apply(ClaudeCodeFiles.plan(project, OPTIONS, false));
        assertTrue(Files.isSymbolicLink(settings), "the link is kept");
        String merged = Files.readString(shared);
        assertTrue(merged.contains("\"opus\"") && merged.contains(ClaudeCodeFiles.MARK.strip()), merged);
        assertEquals("rw-r--r--", PosixFilePermissions.toString(Files.getPosixFilePermissions(shared)));
        assertEquals(List.of(), leftovers(project.resolve(".claude")));
        assertEquals(List.of(), leftovers(project));
    }

    private static List<Path> leftovers(Path dir) throws java.io.IOException {
        try (var s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".tmp")).toList();
        }
    }
}
