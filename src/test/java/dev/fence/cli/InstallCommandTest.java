package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.hook.HookConfig;
import dev.fence.install.HookScripts;
import dev.fence.testing.GitProcess;
import dev.fence.testing.ProcessTest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@ProcessTest
class InstallCommandTest {
    @TempDir
    Path tmp;

    Map<String, String> env;
    Path bare;

    @BeforeEach
    void setUp() {
        env = new HashMap<>(GitProcess.cleanEnv(tmp));
        bare = tmp.resolve("app.git");
        GitProcess.run(tmp, env, "init", "--bare", "-q", bare.toString());
    }

    private TestRootCommand.Run install(String... args) {
        List<String> all = new ArrayList<>(List.of("install"));
        all.addAll(List.of(args));
        return TestRootCommand.run(env, all.toArray(String[]::new));
    }

    private String gitConfig(String key) {
        return GitProcess.runAllowingFailure(bare, env, "config", "--get", key)
                .stdout()
                .strip();
    }

    private static String perms(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    @Test
    void postReceiveIsInstalledByDefaultAndTheHooksApplyLandingsOnlyWithIt() throws IOException {
        var r = install("--bare", bare.toString(), "--launcher", "/opt/fence/bin/fence");
        assertEquals(0, r.exit(), r.err());
        assertTrue(Files.exists(bare.resolve("hooks/post-receive")));
        assertEquals("true", gitConfig("fence.recordLanded"));

        var without = install("--bare", bare.toString(), "--launcher", "/opt/fence/bin/fence", "--no-record-landed");
        assertEquals(0, without.exit(), without.err());
        assertEquals("false", gitConfig("fence.recordLanded"), "a decision then takes effect when it is made");
    }

    @Test
    void bareInstallsExecutableHooksAndConfiguresTheRepo() throws IOException {
        var r = install("--bare", bare.toString(), "--launcher", "/opt/fence/bin/fence", "--record-landed");
        assertEquals(0, r.exit(), r.err());
        Path pre = bare.resolve("hooks/pre-receive");
        Path post = bare.resolve("hooks/post-receive");
        assertEquals("rwxr-xr-x", perms(pre));
        assertEquals("rwxr-xr-x", perms(post));
        String preText = Files.readString(pre);
        assertTrue(preText.startsWith("#!/bin/sh\n" + HookScripts.MARKER + "\n"), preText);
        assertTrue(preText.contains("exec /opt/fence/bin/fence hook pre-receive\n"), preText);
        String postText = Files.readString(post);
        assertTrue(postText.contains("/opt/fence/bin/fence hook post-receive ||"), postText);
        assertTrue(postText.strip().endsWith("exit 0"), postText);
        assertEquals("true", gitConfig("receive.advertisePushOptions"));
        assertEquals("app", gitConfig("fence.repoId"));
        assertTrue(r.out().contains("wrote " + pre), r.out());
        assertTrue(r.out().contains("set git config receive.advertisePushOptions = true"), r.out());
        assertTrue(r.out().contains("Next steps:"), r.out());
        assertTrue(r.out().contains("git:app:refs/heads/<branch>"), r.out());
        assertFalse(Files.exists(bare.resolve("fence.conf")));
    }

    @Test
    void bareIsIdempotent() {
        assertEquals(
                0, install("--bare", bare.toString(), "--launcher", "/x/fence").exit());
        var again = install("--bare", bare.toString(), "--launcher", "/x/fence");
        assertEquals(0, again.exit(), again.err());
        assertTrue(again.out().contains("unchanged " + bare.resolve("hooks/pre-receive")), again.out());
        assertTrue(again.out().contains("unchanged git config fence.repoId = app"), again.out());
        var moved = install("--bare", bare.toString(), "--launcher", "/y/fence");
        assertEquals(0, moved.exit());
        assertTrue(moved.out().contains("updated " + bare.resolve("hooks/pre-receive")), moved.out());
    }

    @Test
    void launcherDefaultsToFenceLauncherThenPath() throws IOException {
        var r = install("--bare", bare.toString());
        assertEquals(0, r.exit(), r.err());
        assertTrue(Files.readString(bare.resolve("hooks/pre-receive")).contains("exec fence hook pre-receive\n"));
        assertTrue(r.out().contains("warning: the hooks run 'fence' from the PATH"), r.out());

        env.put("FENCE_LAUNCHER", "/srv/fence dist/bin/fence");
        assertEquals(0, install("--bare", bare.toString()).exit());
        assertTrue(Files.readString(bare.resolve("hooks/pre-receive"))
                .contains("exec '/srv/fence dist/bin/fence' hook pre-receive\n"));
    }

    @Test
    void jarLaunchForBare() throws IOException {
        assertEquals(
                0,
                install("--bare", bare.toString(), "--jar", "/opt/fence/fence.jar")
                        .exit());
        assertTrue(Files.readString(bare.resolve("hooks/pre-receive"))
                .contains("exec " + java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java")
                        + " -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:CompileThresholdScaling=10 -Xss1m -XX:-UsePerfData -Xshare:auto -jar /opt/fence/fence.jar"
                        + " hook pre-receive\n"));
    }

    @Test
    void repoIdIsKeptAcrossReinstallsAndChangesAreFlagged() {
        assertEquals(
                0, install("--bare", bare.toString(), "--repo-id", "team/app").exit());
        assertEquals("team/app", gitConfig("fence.repoId"));
        assertEquals(0, install("--bare", bare.toString()).exit());
        assertEquals("team/app", gitConfig("fence.repoId"), "a reinstall without --repo-id keeps the id");
        var changed = install("--bare", bare.toString(), "--repo-id", "other");
        assertEquals(0, changed.exit());
        assertTrue(changed.out().contains("warning: fence.repoId changed from 'team/app' to 'other'"), changed.out());
    }

    @Test
    void invalidRepoIdIsAUsageError() {
        var r = install("--bare", bare.toString(), "--repo-id", " padded ");
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("--repo-id: repo id must not start or end with whitespace"), r.err());
    }

    @Test
    void storeIsWrittenToAPrivateFenceConfThatTheHookReads() throws IOException {
        var r = install("--bare", bare.toString(), "--store", "redis://:pw@redis.internal:6379");
        assertEquals(0, r.exit(), r.err());
        Path conf = bare.resolve("fence.conf");
        assertEquals("rw-------", perms(conf));
        HookConfig config = HookConfig.load(bare, null, tmp.resolve("no-system-file"));
        assertEquals(Optional.of(conf), config.file());
        assertEquals(Optional.of("redis://:pw@redis.internal:6379"), config.store());
        assertFalse(r.out().contains(":pw@"), "the store URL is not printed: " + r.out());
    }

    @Test
    void refusesAForeignHookAndChangesNothing() throws IOException {
        Path pre = bare.resolve("hooks/pre-receive");
        Files.writeString(pre, "#!/bin/sh\necho mine\n");
        var r = install("--bare", bare.toString(), "--store", "redis://h:1");
        assertEquals(6, r.exit());
        assertTrue(r.err().contains("refusing to replace a file that fence did not install"), r.err());
        assertTrue(r.err().contains(pre.toString()), r.err());
        assertTrue(r.err().contains("--force"), r.err());
        assertEquals("#!/bin/sh\necho mine\n", Files.readString(pre));
        assertFalse(Files.exists(bare.resolve("hooks/post-receive")));
        assertFalse(Files.exists(bare.resolve("fence.conf")));
        assertEquals("", gitConfig("receive.advertisePushOptions"));
    }

    @Test
    void forceReplacesAForeignHookKeepingABackup() throws IOException {
        Path pre = bare.resolve("hooks/pre-receive");
        Files.writeString(pre, "#!/bin/sh\necho mine\n");
        Files.setPosixFilePermissions(pre, PosixFilePermissions.fromString("rwxr-xr-x"));
        var r = install("--bare", bare.toString(), "--force", "--launcher", "/x/fence");
        assertEquals(0, r.exit(), r.err());
        Path backup = bare.resolve("hooks/pre-receive.fence-backup");
        assertEquals("#!/bin/sh\necho mine\n", Files.readString(backup));
        assertEquals("rw-r--r--", perms(backup));
        assertTrue(HookScripts.isOurs(Files.readAllBytes(pre)));
        assertTrue(r.out().contains("kept the previous pre-receive (not fence's) as " + backup), r.out());
    }

    @Test
    void giteaDispatcherGetsPreReceiveDotD() throws IOException {
        Path hooks = bare.resolve("hooks");
        String dispatcher = fakeGiteaDispatcher();
        Files.writeString(hooks.resolve("pre-receive"), dispatcher);
        Files.writeString(hooks.resolve("post-receive"), dispatcher);
        Files.createDirectories(hooks.resolve("pre-receive.d"));
        Files.writeString(hooks.resolve("pre-receive.d/gitea"), "#!/bin/sh\nexit 0\n");
        var r = install("--bare", bare.toString(), "--launcher", "/x/fence", "--record-landed");
        assertEquals(0, r.exit(), r.err());
        assertEquals(dispatcher, Files.readString(hooks.resolve("pre-receive")), "Gitea's dispatcher is untouched");
        assertEquals("rwxr-xr-x", perms(hooks.resolve("pre-receive.d/fence")));
        assertEquals("rwxr-xr-x", perms(hooks.resolve("post-receive.d/fence")));
        assertTrue(Files.readString(hooks.resolve("pre-receive.d/fence")).contains("hook pre-receive"));
        assertTrue(r.out().contains("Gitea/Forgejo"), r.out());
        assertEquals("true", gitConfig("receive.advertisePushOptions"));
    }

    @Test
    void aServerInstallIntoGiteaWritesTheShimItsConfAndTheCredentialFromItsFile() throws IOException {
        Path hooks = bare.resolve("hooks");
        Files.writeString(hooks.resolve("pre-receive"), fakeGiteaDispatcher());
        Path credential = Files.writeString(tmp.resolve("hook.credential"), "gitea:" + "s".repeat(43) + "\n");
        var r = install(
                "--bare",
                bare.toString(),
                "--server",
                "http://127.0.0.1:8700",
                "--credential-file",
                credential.toString());
        assertEquals(0, r.exit(), r.err());
        Path conf = hooks.resolve("pre-receive.d/" + HookScripts.SHIM_CONF);
        assertEquals(HookScripts.curlShim(), Files.readString(hooks.resolve("pre-receive.d/fence")));
        assertEquals("rw-------", perms(conf));
        assertTrue(Files.readString(conf).contains("\nFENCE_CREDENTIAL=gitea:" + "s".repeat(43) + "\n"));
        assertFalse(r.out().contains("s".repeat(43)), "the secret was printed: " + r.out());
        assertFalse(r.out().contains("credentials add"), "no credential step is left: " + r.out());
        assertTrue(r.out().contains(conf.toString()), r.out());

        var again = install("--bare", bare.toString(), "--server", "http://127.0.0.1:8700");
        assertEquals(0, again.exit(), again.err());
        assertTrue(Files.readString(conf).contains("\nFENCE_CREDENTIAL=gitea:"), "a rerun keeps the credential");

        Files.writeString(credential, "not a credential with its secret\n");
        var bad = install(
                "--bare",
                bare.toString(),
                "--server",
                "http://127.0.0.1:8700",
                "--credential-file",
                credential.toString());
        assertEquals(6, bad.exit(), bad.out());
        assertTrue(bad.err().contains("is not of the form <name>:<secret>"), bad.err());
        assertFalse(bad.err().contains("with its secret"), "the file's content was echoed: " + bad.err());
    }

    @Test
    void dotDDirectoryWithoutDispatcherIsUsedWithAWarning() throws IOException {
        Files.createDirectories(bare.resolve("hooks/pre-receive.d"));
        var r = install("--bare", bare.toString(), "--launcher", "/x/fence", "--record-landed");
        assertEquals(0, r.exit());
        assertTrue(Files.exists(bare.resolve("hooks/pre-receive.d/fence")));
        assertTrue(Files.exists(bare.resolve("hooks/post-receive")));
        assertTrue(r.out().contains("is not a dispatcher that runs it"), r.out());
    }

    @Test
    void honoursCoreHooksPath() throws IOException {
        GitProcess.run(bare, env, "config", "core.hooksPath", "custom-hooks");
        assertEquals(
                0, install("--bare", bare.toString(), "--launcher", "/x/fence").exit());
        assertTrue(Files.exists(bare.resolve("custom-hooks/pre-receive")));
        assertFalse(Files.exists(bare.resolve("hooks/pre-receive")));
    }

    @Test
    void notABareRepositoryIsAUsageError() throws IOException {
        Path plainDir = Files.createDirectory(tmp.resolve("plain"));
        var r = install("--bare", plainDir.toString());
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("not a bare git repository"), r.err());
        var missing = install("--bare", tmp.resolve("missing").toString());
        assertEquals(2, missing.exit());
        assertTrue(missing.err().contains("no such directory"), missing.err());
        Path work = tmp.resolve("work");
        GitProcess.run(tmp, env, "init", "-q", work.toString());
        assertEquals(2, install("--bare", work.resolve(".git").toString()).exit());
    }

    @Test
    void gitMissingFromPathIsAConfigError() {
        env.put("PATH", tmp.resolve("empty-bin").toString());
        var r = install("--bare", bare.toString());
        assertEquals(6, r.exit());
        assertTrue(r.err().contains("git: not found on PATH"), r.err());
    }

    /**
     * An access hook that runs after pre-receive (gitolite's update hook) can refuse a push fence serve has
     * already applied as a bump: the shim install says so, the Java hook install does not need to.
     */
    @Test
    void aShimInstallBesideAnUpdateHookWarnsThatARefusedPushStillBumps() throws Exception {
        java.nio.file.Path update = bare.resolve("hooks/update");
        java.nio.file.Files.writeString(update, "#!/bin/sh\nexit 0\n");
        var shim = install("--bare", bare.toString(), "--shim", "curl", "--server", "http://127.0.0.1:8700");
        assertEquals(0, shim.exit(), shim.err() + shim.out());
        assertTrue(shim.out().contains("warning: " + update + " exists"), shim.out());
        assertTrue(shim.out().contains("still supersedes the lease"), shim.out());
        var java = install("--bare", bare.toString(), "--launcher", "/opt/fence/bin/fence", "--force");
        assertEquals(0, java.exit(), java.err() + java.out());
        assertFalse(java.out().contains("still supersedes"), java.out());
    }

    @Test
    void theCurlShimInABareRepositoryCarriesTheRepoIdAndTheServersFencedRefs() throws Exception {
        java.nio.file.Path policy = java.nio.file.Files.writeString(
                tmp.resolve("server.conf"), "fenced-refs = refs/heads/main, refs/heads/rel/**\n");
        var r = install(
                "--bare",
                bare.toString(),
                "--shim",
                "curl",
                "--server",
                "http://127.0.0.1:8700",
                "--repo-id",
                "shop",
                "--config",
                policy.toString());
        assertEquals(0, r.exit(), r.err() + r.out());
        java.nio.file.Path conf = bare.resolve("hooks/fence-shim.conf");
        String text = java.nio.file.Files.readString(conf);
        assertTrue(text.contains("\nFENCE_SERVER=http://127.0.0.1:8700\n"), text);
        assertTrue(text.contains("\nFENCE_REPO_ID=shop\n"), text);
        assertTrue(text.contains("\nFENCE_FENCED_REFS=refs/heads/main refs/heads/rel/*\n"), text);
        assertEquals(
                "rw-------",
                java.nio.file.attribute.PosixFilePermissions.toString(
                        java.nio.file.Files.getPosixFilePermissions(conf)));
        assertEquals(
                dev.fence.install.HookScripts.curlShim(),
                java.nio.file.Files.readString(bare.resolve("hooks/pre-receive")));
        assertTrue(r.out().contains("FENCE_CREDENTIAL"), r.out());
    }

    @Test
    void usageErrors() {
        assertUsage(install(), "Missing required argument");
        assertUsage(install("--bare", bare.toString(), "--ghes", tmp.toString()), "mutually exclusive");
        assertUsage(
                install("--ghes", tmp.resolve("g").toString(), "--repo-id", "x"), "--repo-id applies only to --bare");
        assertUsage(install("--gitlab-global", tmp.toString(), "--store", "redis://h:1"), "--store applies to --bare");
        assertUsage(
                install("--gitlab-tarball", tmp.resolve("t.tar").toString(), "--shim", "curl"),
                "--shim applies only to --ghes, --gitlab-global and --bare");
        assertUsage(
                install("--bare", bare.toString(), "--shim", "curl", "--store", "redis://h:1"),
                "--store does not apply with --shim curl");
        assertUsage(
                install(
                        "--bare",
                        bare.toString(),
                        "--config",
                        tmp.resolve("f.conf").toString()),
                "--config applies only with --shim curl");
        assertUsage(install("--bare", bare.toString(), "--launcher", "bin/fence"), "must be an absolute path");
        assertUsage(
                install("--bare", bare.toString(), "--launcher", "/a", "--jar", "/b"), "either --launcher or --jar");
        assertUsage(
                install("--ghes", tmp.toString(), "--shim", "kotlin"),
                "Invalid value for option '--shim': expected one of java, curl but was 'kotlin'");
        assertUsage(
                install("--ghes", tmp.toString(), "--shim", "java", "--server", "http://fence:8700"),
                "--server applies only with --shim curl");
        assertUsage(
                install("--gitlab-tarball", tmp.resolve("t.tar").toString(), "--server", "http://fence:8700"),
                "--server applies only to --ghes, --gitlab-global and --bare");
        assertUsage(
                install(
                        "--bare",
                        bare.toString(),
                        "--credential-file",
                        tmp.resolve("c").toString()),
                "--credential-file applies only with --shim curl");
    }

    private static void assertUsage(TestRootCommand.Run r, String expected) {
        assertEquals(2, r.exit(), r.err());
        assertTrue(r.err().contains(expected), r.err());
    }

    /** A dispatcher in the manner of Gitea's: runs every executable in hooks/<name>.d with the same stdin. */
    static String fakeGiteaDispatcher() {
        return """
                #!/usr/bin/env bash
                # AUTO GENERATED BY GITEA, DO NOT MODIFY
                input=$(cat)
                name=$(basename "$0")
                status=0
                for h in "$(dirname "$0")/${name}.d"/*; do
                  [ -f "$h" ] && [ -x "$h" ] || continue
                  printf '%s\\n' "$input" | "$h" || status=$?
                done
                exit $status
                """;
    }
}
