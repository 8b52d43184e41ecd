package dev.fence.cli;

import dev.fence.core.Durations;
import dev.fence.core.Grant;
import dev.fence.core.HeldGrant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseService.AcquireOutcome;
import dev.fence.json.GrantFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code fence lease acquire}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.BUSY, ExitCode.STORE_UNAVAILABLE, ExitCode.CONFIG, ExitCode.INTERNAL})
@Command(
        name = "acquire",
        mixinStandardHelpOptions = true,
        description = {
            "Acquire a lease and its fencing token.",
            "Prints the token; --json also prints the proof that pushes must carry (-o fence-proof=...).",
            "Exits 4 (busy) when another holder's lease is live, and in direct mode (--store) also when the"
                    + " named holder's own is, unless the acquire shows that lease's grant (--grant-file FILE holding it,"
                    + " or --token N with its proof): a holder's name"
                    + " is public, its grant's proof is what shows an acquire is the holder's.",
            "",
            "For a branch, add --git-remote origin (in the clone, or with --clone PATH): the branch's current"
                    + " tip on the remote is recorded with the grant (--json: grantSha) as the expected old id"
                    + " that 'fence push' sends, so a push fails if anyone else wrote there since. The SHA"
                    + " moves only after the holder's own successful 'fence push'; no option sets it.",
            "",
            "--grant-file FILE also writes the grant, proof included, to FILE (mode 0600), for 'fence exec',"
                    + " 'fence push', 'fence lease renew' and 'fence lease release' to act under with --grant-file"
                    + " FILE: the grant travels, nothing takes the lease again. When FILE already holds the"
                    + " holder's live grant on the resource, the acquire shows it and takes the lease again under a"
                    + " new token (as a FENCED remote-changed message asks, so that the lease records the branch as"
                    + " it is now).",
            "",
            "Example: fence lease acquire --repo app --ref main --holder agent-a --ttl 10m --git-remote origin"
                    + " --grant-file ~/.fence/app-main.grant"
        })
final class LeaseAcquireCommand implements Callable<Integer> {
    private final Context ctx;

    @Mixin
    ResourceOptions target;

    @Mixin
    LeaseAccessOptions access;

    @Mixin
    GitRemoteOptions git;

    @Option(names = "--holder", required = true, paramLabel = "NAME", description = "Who holds the lease (agent name).")
    String holder;

    @Option(
            names = "--ttl",
            paramLabel = "DURATION",
            defaultValue = "30s",
            description = "Lease length: 45s, 5m... (default: ${DEFAULT-VALUE}).")
    String ttl;

    @Option(names = "--json", description = "Print one JSON object (includes the proof).")
    boolean json;

    @Option(
            names = "--grant-file",
            paramLabel = "FILE",
            description = "Also write the grant (proof included, mode 0600) to FILE, for the commands that act"
                    + " under it (--grant-file FILE); a live grant of the holder's already in FILE is shown, so"
                    + " that its lease may be taken again.")
    Path grantFile;

    @Option(
            names = "--token",
            paramLabel = "N",
            description = "Show the grant of the holder's live lease by its token (with --proof or $FENCE_PROOF),"
                    + " so that it may be taken again; instead of a --grant-file that holds it.")
    Long token;

    @Option(
            names = "--proof",
            paramLabel = "PROOF",
            description = "The proof of the --token grant (default: $FENCE_PROOF, which keeps it out of process"
                    + " listings).")
    String proof;

    LeaseAcquireCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        String resource = target.resource();
        var duration = Durations.parsePositive("--ttl", ttl);
        String grantSha = git.grantSha(ctx, resource);
        try (var leases = access.open(ctx)) {
            var outcome = leases.acquire(resource, holder, duration, grantSha, shownGrant(resource));
            if (grantFile != null && outcome instanceof AcquireOutcome.Acquired a) {
                GrantFiles.write(ctx.cwd().resolve(grantFile), a.grant());
            }
            return LeaseOutput.acquired(ctx, outcome, json, holder);
        }
    }

    /**
     * The grant the acquire shows: {@code --token} with its proof, else the one already in {@code
     * --grant-file} when it is the holder's on this resource, else null. The
     * file is this command's output: anything else there (another resource's grant, no file, not a grant)
     * is replaced by the new grant, as before, and shows nothing.
     */
    private HeldGrant shownGrant(String resource) {
        if (token != null) {
            if (token <= 0) {
                throw new InvalidInputException("--token must be a positive whole number; got " + token);
            }
            String p = proof != null ? proof : ctx.env().get(GrantOptions.PROOF_ENV);
            if (p == null || p.isBlank()) {
                throw new InvalidInputException(
                        "--token shows a grant with its proof: give --proof or set " + GrantOptions.PROOF_ENV);
            }
            return new HeldGrant(token, p.strip());
        }
        if (proof != null) {
            throw new InvalidInputException("--proof goes with --token");
        }
        if (grantFile == null) {
            return null;
        }
        Path file = ctx.cwd().resolve(grantFile);
        if (!Files.isRegularFile(file)) {
            return null;
        }
        Grant g;
        try {
            g = GrantFiles.read(file);
        } catch (InvalidInputException e) {
            return null;
        }
        boolean mine = g.resource().equals(resource) && g.holder().equals(holder) && g.proof() != null;
        return mine ? HeldGrant.of(g) : null;
    }
}
