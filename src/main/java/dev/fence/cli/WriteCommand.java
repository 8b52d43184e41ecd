package dev.fence.cli;

import dev.fence.core.FencedMessage;
import dev.fence.core.FencedWrites;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseStore;
import dev.fence.files.SharedFiles;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence write}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.FENCED, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL
})
@Command(
        name = "write",
        mixinStandardHelpOptions = true,
        description = {
            "Replace a shared file only if it is still as you read it: its sha256 must be --expected-sha256",
            "(what 'fence read' printed; 64 zeros for a file that does not exist yet) and your lease token",
            "must be current. The new content (--content-file, else stdin) is written to a temporary file",
            "in the same directory, synced and renamed over the file; prints the new sha256.",
            "0: written; 3: FENCED (reason file-changed, or a stale token), nothing written, re-read with",
            "'fence read' and re-plan; 2: bad input (a path outside --root, a symbolic link, a bad hash,",
            "a file another --resource fences: the first write records its resource in the lock file;",
            "content over 16 MiB)."
        })
final class WriteCommand implements Callable<Integer> {
    private final Context ctx;

    @Option(names = "--path", required = true, paramLabel = "P", description = "The file to write.")
    String path;

    @Option(
            names = "--expected-sha256",
            required = true,
            paramLabel = "H",
            description = "The sha256 of the file as you read it (64 zeros: the file must not exist).")
    String expected;

    @Option(names = "--content-file", paramLabel = "F", description = "The new content (default: stdin).")
    String contentFile;

    @Option(names = "--resource", required = true, paramLabel = "NAME", description = "The resource your lease is on.")
    String resource;

    @Option(
            names = "--root",
            paramLabel = "DIR",
            description = "Only files under DIR may be written (default: the working directory).")
    String root;

    @Mixin
    GrantOptions token;

    @Mixin
    StoreOption store;

    WriteCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        byte[] content;
        // One byte more than SharedFiles writes, so that it refuses content over its limit by name, and a
        // content file of gigabytes is never read whole (an array cannot hold over 2 GiB).
        try (InputStream file =
                contentFile != null ? Files.newInputStream(ctx.cwd().resolve(contentFile)) : null) {
            content = (file != null ? file : ctx.in()).readNBytes(SharedFiles.MAX_CONTENT + 1);
        } catch (IOException e) {
            throw new InvalidInputException("cannot read the new content"
                    + (contentFile != null ? " from " + contentFile : " from stdin") + ": " + e.getMessage());
        }
        GrantOptions.Held held = token.require(ctx, resource, "fence write");
        var request = new SharedFiles.Request(
                root == null ? ctx.cwd() : ctx.cwd().resolve(root),
                java.nio.file.Path.of(path),
                path,
                expected,
                content,
                resource,
                held.holder(),
                held.token(),
                held.proof());
        SharedFiles.Outcome outcome;
        try (LeaseStore leases = store.open(ctx)) {
            outcome = new SharedFiles(new FencedWrites(leases, ctx.clock())).write(request);
        }
        if (outcome instanceof SharedFiles.Outcome.Refused r) {
            FencedMessage.lines(r.fenced(), r.reread()).forEach(ctx.err()::println);
            return ExitCode.FENCED.code();
        }
        ctx.out().println(((SharedFiles.Outcome.Written) outcome).newSha256());
        return ExitCode.OK.code();
    }
}
