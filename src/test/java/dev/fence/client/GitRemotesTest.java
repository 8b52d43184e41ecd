package dev.fence.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.InvalidInputException;
import dev.fence.testing.GitFixture;
import dev.fence.testing.ProcessTest;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What a user-given remote may be, in a real clone. */
@ProcessTest
class GitRemotesTest {
    @TempDir
    Path tmp;

    GitFixture git;
    Path bare;
    Path clone;
    GitRemotes remotes;

    @BeforeEach
    void setUp() {
        git = new GitFixture(tmp);
        bare = git.bareWithMain("remote");
        clone = git.clone(bare, "clone");
        remotes = new GitRemotes(git.env());
    }

    /**
     * git reads a word that starts with '-' as its own option wherever it stands before {@code --}:
     * {@code --receive-pack=CMD} given to push (or {@code --upload-pack=CMD} to ls-remote) runs CMD.
     */
    @ParameterizedTest
    @ValueSource(strings = {"--receive-pack=touch pwned:x", "--upload-pack=x:y", "-oremote", "-"})
    void aRemoteThatStartsWithADashIsRefusedAsUsage(String remote) {
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> remotes.resolve(clone, remote));
        assertTrue(e.getMessage().contains("starts with '-'"), e.getMessage());
    }

    @Test
    void namesAndUrlsStillResolve() {
        assertEquals(new GitRemotes.Remote("origin", bare.toString()), remotes.resolve(clone, "origin"));
        assertEquals(new GitRemotes.Remote(null, bare.toString()), remotes.resolve(clone, bare.toString()));
        assertEquals(
                git.tip(bare, "refs/heads/main"),
                remotes.tip(clone, remotes.resolve(clone, "origin"), "refs/heads/main"));
    }
}
