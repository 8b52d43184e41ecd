package dev.fence.files;

import dev.fence.core.FencedWrites;
import dev.fence.core.LeaseStore;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;

/**
 * A child JVM for {@link SharedFilesCrashIT}: writes a file through {@link SharedFiles} and, once its
 * temporary file is written and synced but before the rename, prints {@code READY <temp>} and waits to be
 * killed.
 *
 * <p>Arguments: store URL, root, path, expected sha256, resource, holder, token, content; the proof in
 * {@code FENCE_PROOF}.
 */
public final class PausingWriter {
    private PausingWriter() {}

    public static void main(String[] args) throws Exception {
        try (LeaseStore store = Stores.open(args[0], StoreOptions.defaults())) {
            SharedFiles files = new SharedFiles(new FencedWrites(store, Clock.systemUTC()), new SharedFiles.Seam() {
                @Override
                public void beforeRename(Path temp, Path target) {
                    System.out.println("READY " + temp);
                    System.out.flush();
                    try {
                        Thread.sleep(600_000);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            files.write(new SharedFiles.Request(
                    Path.of(args[1]),
                    Path.of(args[2]),
                    args[2],
                    args[3],
                    args[7].getBytes(StandardCharsets.UTF_8),
                    args[4],
                    args[5],
                    Long.parseLong(args[6]),
                    System.getenv("FENCE_PROOF")));
        }
    }
}
