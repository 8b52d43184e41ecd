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
