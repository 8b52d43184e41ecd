package dev.fence.doctor;

import dev.fence.core.HostKind;
import dev.fence.core.InvalidInputException;
import dev.fence.hook.HookConfig;
import dev.fence.hook.HookEnvironment;
import dev.fence.hook.HookEnvironments;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@code hook.identity}: the pusher and repo id the installed hook would resolve from this environment
 * and the hook's configuration, through the same {@link HookEnvironments#detect(Map, Path, HookConfig)}
 * the hook runs. Fails when the hook would refuse every push for want of an identity; warns when a
 * plain-git pusher comes from {@code USER} or {@code LOGNAME} and is the account that owns the
 * repository, the sign of a host that runs every push as one shared account (gitolite, an ssh forced
 * command) so that {@code agent-pushers} and pusher policies never see the real pusher.
 */
public final class HookIdentityCheck implements Check {
    static final String NAME = "hook.identity";

    private final Map<String, String> env;
    private final Path gitDir;
    private final Path configFile;

    /**
     * @param env the environment to resolve from (the doctor's own: set a host's variables to see what a
     *     push with them resolves)
     * @param gitDir the repository, or null when none was named (the repo id is then not shown)
     * @param configFile the hook's configuration file, or null to find it as the hook does ({@link
     *     HookConfig#load(Path, Path)}); a broken one is this check's failure
     */
    public HookIdentityCheck(Map<String, String> env, Path gitDir, Path configFile) {
        this.env = env;
        this.gitDir = gitDir;
        this.configFile = configFile;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<Finding> run() {
        HookConfig config = HookConfig.load(gitDir, configFile);
        boolean repoKnown = gitDir != null || config.repoId().isPresent();
        HookEnvironment where;
        try {
            where = repoKnown
                    ? HookEnvironments.detect(env, gitDir, config)
                    : HookEnvironments.detect(env, null, "-", config.pusherVariables());
        } catch (InvalidInputException e) {
            return List.of(Finding.fail(
                    NAME,
                    "the hook would refuse every push to a fenced ref: " + e.getMessage(),
                    "make the host set the variable named, or set pusher-variables in "
                            + config.file().map(Path::toString).orElse("fence.conf")));
        }
        String pusher = where.actor().pusher();
        String variable = HookEnvironments.pusherVariable(env, config.pusherVariables());
        String source = where.host() == HostKind.PLAIN
                ? variable + " (pusher-variables: " + String.join(", ", config.pusherVariables()) + ")"
                : where.host().label() + "'s own variable";
        String repo = repoKnown || where.host() != HostKind.PLAIN ? where.repoId() : "unknown without --repo";
        String agent = config.policy().isAgent(pusher) ? "an agent pusher" : "not an agent";
        String detail = "host " + where.host().label() + ", pusher '" + pusher + "' from " + source + " (" + agent
                + "), repo id '" + repo + "'";
        if (where.host() == HostKind.PLAIN
                && ("USER".equals(variable) || "LOGNAME".equals(variable))
                && pusher.equals(owner())) {
            return List.of(Finding.warn(
                    NAME,
                    detail + "; that is the account owning the repository, so a host that runs every push as"
                            + " it records every pusher as '" + pusher + "'",
                    "under gitolite or an ssh forced command with one shared account, have the host set a"
                            + " variable listed before USER in pusher-variables (gitolite's GL_USER is read by"
                            + " default); rerun with it set (e.g. GL_USER=alice fence doctor --repo ...) to see"
                            + " what such a push resolves"));
        }
        return List.of(Finding.ok(NAME, detail));
    }

    private String owner() {
        if (gitDir == null) {
            return null;
        }
        try {
            return Files.getOwner(gitDir).getName();
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }
}
