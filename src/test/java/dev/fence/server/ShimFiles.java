package dev.fence.server;

import dev.fence.core.FencePolicy;
import dev.fence.install.HookScripts;
import dev.fence.install.ShimSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The curl shim as fence install lays it out: the script and a fence-shim.conf beside it. */
final class ShimFiles {
    private ShimFiles() {}

    /**
     * Writes {@code dir/pre-receive} (the shim) and {@code dir/fence-shim.conf} with what {@link
     * ShimSettings} derives from the default policy and {@code repoId}; the server and the credential come
     * from the environment (or {@code extra}, appended to the file).
     *
     * @return the script
     */
    /** The settings the shim reads from its file only (never from the environment). */
    static final java.util.Set<String> FILE_ONLY = java.util.Set.of(
            "FENCE_SERVER", "FENCE_CREDENTIAL", "FENCE_SHIM_BUDGET", "FENCE_SHIM_HOOK", "FENCE_SHIM_TRANSPORT");

    /**
     * Moves the settings of {@link #FILE_ONLY} out of {@code env} into fence-shim.conf lines, as fence install
     * would write them.
     *
     * @return the lines, to pass as {@code extra} to {@link #install}
     */
    static String settingsOf(java.util.Map<String, String> env) {
        StringBuilder lines = new StringBuilder();
        for (String key : new java.util.TreeSet<>(FILE_ONLY)) {
            String value = env.remove(key);
            if (value != null) {
                lines.append(key).append('=').append(value).append('\n');
            }
        }
        return lines.toString();
    }

    static Path install(Path dir, String repoId, String extra) {
        try {
            Files.createDirectories(dir);
            Path script = dir.resolve("pre-receive");
            Files.copy(Path.of("hooks/pre-receive-curl.sh"), script, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.writeString(
                    dir.resolve(HookScripts.SHIM_CONF),
                    HookScripts.shimConf(null, null, new ShimSettings(FencePolicy.defaults(), repoId, null)) + extra);
            return script;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
