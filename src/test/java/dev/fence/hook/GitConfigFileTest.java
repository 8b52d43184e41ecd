package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.ConfigException;
import dev.fence.testing.GitProcess;
import dev.fence.testing.ProcessTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@ProcessTest
class GitConfigFileTest {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(
            strings = {
                "simple",
                "team/app",
                "with space inside",
                " leading and trailing ",
                "hash#and;semicolon",
                "quote\"and\\backslash",
                "tab\there",
                "ünïcödé"
            })
    void readsWhatGitWrites(String value) {
        Path repo = tmp.resolve("r.git");
        Map<String, String> env = GitProcess.cleanEnv(tmp);
        GitProcess.run(tmp, env, "init", "--bare", "-q", repo.toString());
        GitProcess.run(tmp, env, "config", "--file", repo.resolve("config").toString(), "fence.repoId", value);
        assertEquals(Optional.of(value), GitConfigFile.get(repo.resolve("config"), "fence", "repoId"));
        String byGit = GitProcess.runAllowingFailure(
                        tmp, env, "config", "--file", repo.resolve("config").toString(), "--get", "fence.repoid")
                .stdout();
        assertEquals(value + "\n", byGit, "sanity: git reads back what it wrote");
    }

    @Test
    void handlesCommentsSectionsCaseAndLastValue() throws IOException {
        Path f = write(
                """
                # comment
                [core]
                \trepoId = not-this-one
                [fence "sub"]
                \trepoId = nor-this
                [fence.old]
                \trepoId = nor-this-either
                [FENCE] REPOID = first ; trailing comment
                [fence]
                \trepoid = "quoted # not a comment" tail  # comment
                [other]
                \tflag
                """);
        assertEquals(Optional.of("quoted # not a comment tail"), GitConfigFile.get(f, "fence", "repoId"));
        assertEquals(Optional.of("true"), GitConfigFile.get(f, "other", "flag"));
        assertEquals(Optional.empty(), GitConfigFile.get(f, "fence", "missing"));
    }

    @Test
    void continuationLines() throws IOException {
        Path f = write("[fence]\n\trepoId = one \\\ntwo\n");
        assertEquals(Optional.of("one two"), GitConfigFile.get(f, "fence", "repoId"));
    }

    @Test
    void missingFileIsEmpty() {
        assertEquals(Optional.empty(), GitConfigFile.get(tmp.resolve("nope"), "fence", "repoId"));
    }

    @Test
    void malformedFileNamesTheLine() throws IOException {
        Path f = write("[fence]\n\trepoId = \"unterminated\n");
        var e = assertThrows(ConfigException.class, () -> GitConfigFile.get(f, "fence", "repoId"));
        assertTrue(e.getMessage().contains(f + ":2"), e.getMessage());
    }

    private Path write(String text) throws IOException {
        Path f = tmp.resolve("config");
        Files.writeString(f, text);
        return f;
    }
}
