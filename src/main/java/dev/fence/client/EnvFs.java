package dev.fence.client;

import java.util.Map;
import org.eclipse.jgit.util.FS;
import org.eclipse.jgit.util.FS_POSIX;

/**
 * JGit's POSIX file system with one change: the processes JGit forks (the {@code git receive-pack} of a
 * local remote, which runs that repository's hooks) get fence's environment map instead of the JVM's.
 * Without it a test, or an embedding harness, could not control what a local remote's hooks see.
 */
final class EnvFs extends FS_POSIX {
    private final Map<String, String> env;

    EnvFs(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    @Override
    public FS newInstance() {
        return new EnvFs(env);
    }

    @Override
    public ProcessBuilder runInShell(String cmd, String[] args) {
        ProcessBuilder pb = super.runInShell(cmd, args);
        pb.environment().clear();
        pb.environment().putAll(env);
        return pb;
    }
}
