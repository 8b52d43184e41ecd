package dev.fence.client;

import dev.fence.core.ConfigException;
import dev.fence.core.InvalidInputException;
import dev.fence.core.Names;
import dev.fence.core.Resources;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * Installs the pre-push guard into a clone: {@code <hooks>/pre-push} (marked {@value #MARKER}) runs
 * {@code <launcher> guard pre-push "$@"}, and the clone's git config gets {@code fence.holder}, {@code
 * fence.repoId} and {@code fence.store} or {@code fence.server} as given (setting one unsets the other). A hook fence did not write is left alone unless forced
 * (then it is kept as {@code pre-push.before-fence}).
 */
public final class GuardInstaller {
    /** The line that marks a hook as fence's. */
    public static final String MARKER = "# installed by fence";

    private final GitRemotes git;

    public GuardInstaller(GitRemotes git) {
        this.git = git;
    }

    /**
     * What to install.
     *
     * @param cloneDir a directory inside the clone
     * @param holder the holder to set as {@code fence.holder}, or null to keep the configured one
     * @param repoId the repo id to set as {@code fence.repoId}, or null to keep the configured one
     * @param store the store URL to set as {@code fence.store}, or null to keep the configured one
     * @param server the fence serve URL to set as {@code fence.server}, or null to keep the configured one
     * @param launcher the fence launcher the hook runs (an absolute path, or {@code fence} from PATH)
     * @param force replace a pre-push hook fence did not write
     */
    public record Request(
            Path cloneDir, String holder, String repoId, String store, String server, String launcher, boolean force) {}

    /** What happened. */
    public sealed interface Result {
        /** Installed; {@code done} lists the changes, {@code warnings} what to look at. */
        record Installed(Path hook, List<String> done, List<String> warnings) implements Result {}

        /** Nothing changed: a foreign hook is in the way. */
        record Refused(Path hook, String message) implements Result {}
    }

    /** The hook script for {@code launcher}. */
    public static String script(String launcher) {
        return "#!/bin/sh\n"
                + MARKER + "\n"
                + "# fence guard: before git pushes a branch, checks that this clone's holder (git config fence.holder)\n"
                + "# holds the branch's lease and that the remote's tip is still the SHA the lease recorded.\n"
                + "# A guardrail, not the fence: 'git push --no-verify' skips it. The fence is the remote's\n"
                + "# pre-receive hook and the expected old id that 'fence push' sends.\n"
                + "exec " + shellQuote(launcher) + " guard pre-push \"$@\"\n";
    }

    /**
     * Installs, or refuses without changing anything.
     *
     * @throws InvalidInputException for a path that is not a clone, or an invalid holder or repo id
     * @throws ConfigException when a file or the git config cannot be written
     */
    public Result install(Request r) {
        Path top = git.workTree(r.cloneDir());
        if (r.holder() != null) {
            Names.require("holder", r.holder());
        }
        if (r.repoId() != null) {
            Resources.forRef(r.repoId(), "refs/heads/main");
        }
        if (r.store() != null && r.server() != null) {
            throw new InvalidInputException("give either --store or --server, not both");
        }
        if (r.launcher() == null
                || r.launcher().isBlank()
                || r.launcher().chars().anyMatch(Character::isISOControl)) {
            throw new InvalidInputException("the launcher path must be a non-empty path without control characters");
        }
        Path hooks = git.hooksDir(top);
        Path hook = hooks.resolve("pre-push");
        List<String> done = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        try {
            if (Files.exists(hook)) {
                String existing = Files.readString(hook, StandardCharsets.UTF_8);
                if (!existing.contains(MARKER)) {
                    if (!r.force()) {
                        return new Result.Refused(
                                hook,
                                hook + " exists and was not installed by fence; rerun with --force to replace it"
                                        + " (it is kept as pre-push.before-fence)");
                    }
                    Path backup = hooks.resolve("pre-push.before-fence");
                    Files.move(hook, backup, StandardCopyOption.REPLACE_EXISTING);
                    done.add("moved the existing hook to " + backup);
                }
            }
            Files.createDirectories(hooks);
            Files.writeString(hook, script(r.launcher()), StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
            done.add("wrote " + hook);
        } catch (IOException e) {
            throw new ConfigException("cannot write " + hook + ": " + e.getMessage(), e);
        }
        set(top, PrePushGuard.HOLDER_KEY, r.holder(), done);
        set(top, PrePushGuard.REPO_ID_KEY, r.repoId(), done);
        set(top, PrePushGuard.STORE_KEY, r.store(), done);
        set(top, PrePushGuard.SERVER_KEY, r.server(), done);
        if (r.store() != null && git.unsetConfig(top, PrePushGuard.SERVER_KEY)) {
            done.add("unset git config " + PrePushGuard.SERVER_KEY + " (the guard reads the store)");
        }
        if (r.server() != null && git.unsetConfig(top, PrePushGuard.STORE_KEY)) {
            done.add("unset git config " + PrePushGuard.STORE_KEY + " (the guard asks the server)");
        }
        for (String key : List.of(PrePushGuard.HOLDER_KEY, PrePushGuard.REPO_ID_KEY)) {
            if (git.config(top, key) == null) {
                warnings.add(key + " is not set: the guard refuses every branch push until it is (--holder, --repo)");
            }
        }
        if (r.store() != null && r.store().contains("@")) {
            warnings.add("the store URL carries credentials and is now in the clone's git config, readable by anyone"
                    + " who can read the clone; prefer FENCE_STORE in the agent's environment");
        }
        if (r.launcher().indexOf('/') < 0) {
            warnings.add("the hook runs '" + r.launcher() + "' from git's PATH; set FENCE_LAUNCHER or pass --launcher"
                    + " to pin the launcher");
        } else if (!Files.isExecutable(Path.of(r.launcher()))) {
            warnings.add("launcher " + r.launcher() + " does not exist or is not executable");
        }
        return new Result.Installed(hook, done, warnings);
    }

    private void set(Path top, String key, String value, List<String> done) {
        if (value == null) {
            return;
        }
        git.setConfig(top, key, value);
        done.add("set git config " + key + (key.equals(PrePushGuard.STORE_KEY) ? "" : " = " + value));
    }

    private static String shellQuote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
