package dev.fence.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Grant;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Grant files, one at a time and as a directory of them. */
class GrantFilesTest {
    static final Instant AT = Instant.parse("2026-11-29T14:00:00Z");

    @TempDir
    Path tmp;

    static Grant grant(String resource, String holder, long token) {
        return new Grant(resource, holder, token, "fp2.x" + token, "g1", AT, AT.plusSeconds(30), null, null, null);
    }

    @Test
    void aKeptGrantIsTheOwnersAloneAndReadsBackWhole() throws Exception {
        Path dir = tmp.resolve("grants/agent-a");
        Path file = GrantFiles.keep(dir, grant("git:app:refs/heads/main", "agent-a", 7));
        assertEquals(dir, file.getParent());
        assertTrue(file.getFileName().toString().startsWith("git_app_refs_heads_main-"), file.toString());
        assertEquals(PosixFilePermissions.fromString("rw-------"), Files.getPosixFilePermissions(file));
        assertEquals(PosixFilePermissions.fromString("rwx------"), Files.getPosixFilePermissions(dir));
        Grant back = GrantFiles.read(file);
        assertEquals("fp2.x7", back.proof());
        assertEquals(AT.plusSeconds(30), back.expiresAt());
    }

    @Test
    void aDirectoryKeepsOneGrantPerResourceFindsThemByGrantAndForgetsThem() throws Exception {
        Path dir = tmp.resolve("grants");
        assertEquals(GrantFiles.Kept.none(), GrantFiles.readDir(dir), "no directory, no grants");
        GrantFiles.keep(dir, grant("db/migrations", "agent-a", 3));
        GrantFiles.keep(dir, grant("db/migrations", "agent-a", 4));
        GrantFiles.keep(dir, grant("shared/notes", "agent-a", 1));
        GrantFiles.write(dir.resolve("by-hand.grant"), grant("docs/plan", "agent-a", 9));
        Files.writeString(dir.resolve("broken.grant"), "{ not json");
        Files.writeString(dir.resolve("notes.txt"), "not a grant file");

        GrantFiles.Kept kept = GrantFiles.readDir(dir);
        assertEquals(3, kept.grants().size(), kept.grants().toString());
        assertNull(kept.find("db/migrations", "agent-a", 3), "a later grant on the resource replaced it");
        assertEquals("fp2.x4", kept.find("db/migrations", "agent-a", 4).proof());
        assertEquals("fp2.x9", kept.find("docs/plan", "agent-a", 9).proof());
        assertNull(kept.find("db/migrations", "agent-b", 4), "another holder's grant is not this one");
        assertEquals(1, kept.unreadable().size(), kept.unreadable().toString());
        assertTrue(
                kept.unreadable().get(0).contains("broken.grant"),
                kept.unreadable().toString());

        GrantFiles.forget(dir, "docs/plan", "agent-a", 8);
        assertEquals(3, GrantFiles.readDir(dir).grants().size(), "another token's grant stays");
        GrantFiles.forget(dir, "docs/plan", "agent-a", 9);
        GrantFiles.forget(dir, "db/migrations", "agent-a", 4);
        assertEquals(
                List.of("shared/notes"),
                GrantFiles.readDir(dir).grants().stream().map(Grant::resource).toList());
    }

    /** A kept grant is a file of the directory: a link could lead anywhere, and its text is not repeated. */
    @Test
    void aLinkInTheDirectoryIsNoGrantAndWhatItLeadsToIsNotQuoted() throws Exception {
        Path dir = tmp.resolve("grants");
        GrantFiles.keep(dir, grant("db/migrations", "agent-a", 3));
        Path secret = Files.writeString(tmp.resolve("credentials"), "AKIASECRETKEY");
        Files.createSymbolicLink(dir.resolve("z.grant"), secret);
        Files.writeString(dir.resolve("y.grant"), "AKIASECRETKEY");

        GrantFiles.Kept kept = GrantFiles.readDir(dir);
        assertEquals(1, kept.grants().size());
        assertEquals(2, kept.unreadable().size(), kept.unreadable().toString());
        assertTrue(
                kept.unreadable().stream().noneMatch(u -> u.contains("AKIA")),
                kept.unreadable().toString());
        assertTrue(kept.unreadable().stream().anyMatch(u -> u.contains("z.grant is not a regular file")));
    }

    @Test
    void longAndOddResourceNamesMakeDistinctFileNames() {
        String a = "x".repeat(300) + "/a";
        String b = "x".repeat(300) + "/b";
        String fa = GrantFiles.fileName(a);
        assertTrue(fa.length() < 100, fa);
        assertTrue(!fa.equals(GrantFiles.fileName(b)), fa);
        assertTrue(GrantFiles.fileName("../../etc/passwd").matches("[A-Za-z0-9._-]+"), "no path in a name");
    }
}
