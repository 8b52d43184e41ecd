package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.Actor;
import dev.fence.core.HostKind;
import dev.fence.core.InvalidInputException;
import dev.fence.core.PushOptions;
import dev.fence.core.RefUpdate;
import dev.fence.testing.GitProcess;
import dev.fence.testing.ProcessTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@ProcessTest
class HookEnvironmentsTest {
    @TempDir
    Path tmp;

    private static Map<String, String> env(String... pairs) {
        Map<String, String> env = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return env;
    }

    private static String failure(Map<String, String> env, Path gitDir) {
        return assertThrows(InvalidInputException.class, () -> HookEnvironments.detect(env, gitDir))
                .getMessage();
    }

    @Test
    void gitlab() {
        HookEnvironment e = HookEnvironments.detect(
                env(
                        "GL_ID", "user-2234",
                        "GL_REPOSITORY", "project-42",
                        "GL_USERNAME", "alice",
                        "GL_PROTOCOL", "ssh",
                        "GL_PROJECT_PATH", "group/app",
                        "USER", "git"),
                tmp);
        assertEquals(HostKind.GITLAB, e.host());
        assertEquals("project-42", e.repoId());
        assertEquals("group/app", e.repoDisplay());
        assertEquals(new Actor("alice", HostKind.GITLAB, "ssh"), e.actor());
        assertTrue(e.gitlabStyle());
        assertEquals("GL-HOOK-ERR: ", e.linePrefix());
    }

    @Test
    void gitlabFallsBackToGlIdAndRepoIdForDisplay() {
        HookEnvironment e = HookEnvironments.detect(env("GL_ID", "key-4", "GL_REPOSITORY", "project-1"), null);
        assertEquals("key-4", e.actor().pusher());
        assertEquals("project-1", e.repoDisplay());
        assertNull(e.actor().via());
    }

    @Test
    void gitlabWithoutRepositoryNamesTheVariable() {
        String m = failure(env("GL_ID", "user-1", "GL_USERNAME", "alice", "GL_PROTOCOL", "web"), tmp);
        assertTrue(m.startsWith("GitLab hook environment is missing GL_REPOSITORY"), m);
    }

    @Test
    void gitlabWithoutAnyPusherNamesTheVariable() {
        String m = failure(env("GL_REPOSITORY", "project-1"), tmp);
        assertTrue(m.contains("missing GL_USERNAME") && m.contains("GL_ID"), m);
    }

    @Test
    void gitlabEmptyVariableCountsAsMissing() {
        assertTrue(failure(env("GL_ID", "user-1", "GL_REPOSITORY", "", "GL_USERNAME", "a"), tmp)
                .contains("missing GL_REPOSITORY"));
    }

    @Test
    void ghes() {
        HookEnvironment e = HookEnvironments.detect(
                env(
                        "GITHUB_REPO_NAME", "org/app",
                        "GITHUB_USER_LOGIN", "bob",
                        "GITHUB_VIA", "pull request merge button"),
                tmp);
        assertEquals(HostKind.GHES, e.host());
        assertEquals("org/app", e.repoId());
        assertEquals(new Actor("bob", HostKind.GHES, "pull request merge button"), e.actor());
        assertFalse(e.gitlabStyle());
        assertEquals("", e.linePrefix());
    }

    @Test
    void ghesWithoutLoginNamesTheVariable() {
        String m = failure(env("GITHUB_REPO_NAME", "org/app", "USER", "git"), tmp);
        assertTrue(m.startsWith("GHES hook environment is missing GITHUB_USER_LOGIN"), m);
    }

    @Test
    void gitea() {
        HookEnvironment e = HookEnvironments.detect(
                env(
                        "GITEA_REPO_ID", "17",
                        "GITEA_REPO_USER_NAME", "org",
                        "GITEA_REPO_NAME", "app",
                        "GITEA_PUSHER_NAME", "carol",
                        "GITEA_PUSHER_ID", "3"),
                tmp);
        assertEquals(HostKind.GITEA, e.host());
        assertEquals("17", e.repoId());
        assertEquals("org/app", e.repoDisplay());
        assertEquals("carol", e.actor().pusher());
    }

    @Test
    void giteaWithoutPusherNamesTheVariable() {
        assertTrue(failure(env("GITEA_REPO_ID", "17"), tmp)
                .startsWith("Gitea hook environment is missing GITEA_PUSHER_NAME"));
    }

    @Test
    void plainGitUsesTheDirectoryNameWithoutDotGit() throws Exception {
        Path repo = Files.createDirectory(tmp.resolve("app.git"));
        HookEnvironment e = HookEnvironments.detect(env("USER", "dave"), repo);
        assertEquals(HostKind.PLAIN, e.host());
        assertEquals("app", e.repoId());
        assertEquals(new Actor("dave", HostKind.PLAIN, null), e.actor());
    }

    @Test
    void plainGitResolvesDotAsTheHookSees() throws Exception {
        Path repo = Files.createDirectory(tmp.resolve("svc.git"));
        assertEquals(
                "svc",
                HookEnvironments.detect(env("USER", "d"), repo.resolve(".")).repoId());
        assertEquals("work", HookEnvironments.directoryRepoId(tmp.resolve("work/.git")));
    }

    @Test
    void plainGitReadsFenceRepoIdFromGitConfig() {
        Path repo = tmp.resolve("app.git");
        Map<String, String> gitEnv = GitProcess.cleanEnv(tmp);
        GitProcess.run(tmp, gitEnv, "init", "--bare", "-q", repo.toString());
        GitProcess.run(repo, gitEnv, "config", "fence.repoId", "team/app #1");
        assertEquals(
                "team/app #1", HookEnvironments.detect(env("USER", "d"), repo).repoId());
    }

    @Test
    void plainGitOverrideWins() {
        Path repo = tmp.resolve("app.git");
        Map<String, String> gitEnv = GitProcess.cleanEnv(tmp);
        GitProcess.run(tmp, gitEnv, "init", "--bare", "-q", repo.toString());
        GitProcess.run(repo, gitEnv, "config", "fence.repoId", "configured");
        assertEquals(
                "override",
                HookEnvironments.detect(env("USER", "d"), repo, "override").repoId());
    }

    @Test
    void plainGitPusherOrder() {
        Path repo = tmp.resolve("r.git");
        assertEquals(
                "ru",
                HookEnvironments.detect(
                                env("FENCE_PUSHER", "fp", "REMOTE_USER", "ru", "USER", "u", "LOGNAME", "l"), repo)
                        .actor()
                        .pusher(),
                "no fence variable names the pusher: on a local-path remote it would be the pusher's to choose");
        assertEquals(
                "u",
                HookEnvironments.detect(env("FENCE_PUSHER", "fp", "USER", "u"), repo)
                        .actor()
                        .pusher());
        assertEquals(
                "ru",
                HookEnvironments.detect(env("REMOTE_USER", "ru", "USER", "u", "LOGNAME", "l"), repo)
                        .actor()
                        .pusher());
        assertEquals(
                "u",
                HookEnvironments.detect(env("USER", "u", "LOGNAME", "l"), repo)
                        .actor()
                        .pusher());
        assertEquals(
                "l", HookEnvironments.detect(env("LOGNAME", "l"), repo).actor().pusher());
    }

    @Test
    void gitolitesGlUserNamesThePusherNotTheSharedAccount() {
        Path repo = tmp.resolve("app.git");
        HookEnvironment e = HookEnvironments.detect(env("GL_USER", "agent-a", "GL_REPO", "app", "USER", "git"), repo);
        assertEquals(new Actor("agent-a", HostKind.PLAIN, null), e.actor());
        assertEquals("app", e.repoId());
        assertEquals(
                "GL_USER",
                HookEnvironments.pusherVariable(
                        env("GL_USER", "a", "USER", "git"), HookConfig.DEFAULT_PUSHER_VARIABLES));
        assertEquals(
                "USER",
                HookEnvironments.pusherVariable(env("GL_USER", "", "USER", "git"), HookConfig.DEFAULT_PUSHER_VARIABLES),
                "empty counts as unset");
    }

    @Test
    void configuredPusherVariablesAreTriedInTheirOrderAndNoOthers() throws Exception {
        Path repo = Files.createDirectories(tmp.resolve("app.git"));
        Files.writeString(repo.resolve("fence.conf"), "pusher-variables = SSH_PUSHER, USER\n");
        HookConfig config = HookConfig.load(repo, null, tmp.resolve("none"));
        Map<String, String> both = env("SSH_PUSHER", "agent-b", "GL_USER", "agent-a", "USER", "git");
        assertEquals(
                "agent-b", HookEnvironments.detect(both, repo, config).actor().pusher());
        assertEquals(
                "git",
                HookEnvironments.detect(env("GL_USER", "agent-a", "USER", "git"), repo, config)
                        .actor()
                        .pusher(),
                "GL_USER is not read once the file names other variables");
        String m = assertThrows(
                        InvalidInputException.class,
                        () -> HookEnvironments.detect(env("GL_USER", "agent-a"), repo, config))
                .getMessage();
        assertTrue(m.contains("none of SSH_PUSHER, USER is set") && m.contains("pusher-variables"), m);
        assertEquals(
                "alice",
                HookEnvironments.detect(
                                env("GL_REPOSITORY", "project-1", "GL_USERNAME", "alice", "SSH_PUSHER", "x"),
                                repo,
                                config)
                        .actor()
                        .pusher(),
                "hosts with their own identity variables ignore pusher-variables");
    }

    @Test
    void plainGitWithoutAnyPusherIsAnError() {
        String m = failure(env(), tmp.resolve("r.git"));
        assertTrue(m.contains("GL_USER, REMOTE_USER, USER, LOGNAME") && !m.contains("FENCE_PUSHER"), m);
    }

    @Test
    void plainGitWithoutGitDirIsAnError() {
        assertTrue(failure(env("USER", "u"), null).contains("GIT_DIR"));
    }

    @Test
    void controlCharactersInIdentityAreRejectedAndEscaped() {
        String m = failure(env("GL_REPOSITORY", "project-1", "GL_USERNAME", "eve\u001b[2J"), tmp);
        assertTrue(m.contains("GL_USERNAME contains a control character"), m);
        HookInputParserTest.assertNoControlCharacters(m);
    }

    @Test
    void detectionOrderPrefersGitLab() {
        assertEquals(
                HostKind.GITLAB,
                HookEnvironments.detect(
                                env(
                                        "GL_REPOSITORY", "project-1",
                                        "GL_USERNAME", "a",
                                        "GITHUB_REPO_NAME", "o/r",
                                        "GITEA_REPO_ID", "1"),
                                tmp)
                        .host());
    }

    @Test
    void attemptCarriesRepoAndActor() {
        HookEnvironment e = HookEnvironments.detect(env("GITHUB_REPO_NAME", "o/r", "GITHUB_USER_LOGIN", "x"), tmp);
        var update = new RefUpdate("0".repeat(40), "a".repeat(40), "refs/heads/main");
        var attempt = e.attempt(PushOptions.none(), List.of(update));
        assertEquals("o/r", attempt.repoId());
        assertEquals("x", attempt.actor().pusher());
        assertEquals(List.of(update), attempt.updates());
    }
}
