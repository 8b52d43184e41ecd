package dev.fence.cli;

import picocli.CommandLine.Option;

/** {@code --holder}, {@code --token} and the optional proof of a lease being renewed or released. */
final class TokenOptions {
    /** Environment variable that may carry the proof, so it stays out of process listings. */
    static final String PROOF_ENV = "FENCE_PROOF";

    @Option(names = "--holder", required = true, paramLabel = "NAME", description = "The lease holder.")
    String holder;

    @Option(names = "--token", required = true, paramLabel = "N", description = "The lease's fencing token.")
    long token;

    @Option(
            names = "--proof",
            paramLabel = "PROOF",
            description = "The grant's proof (or set FENCE_PROOF). When given it must match the grant.")
    String proof;

    String proof(Context ctx) {
        if (proof != null) {
            return proof;
        }
        String env = ctx.env().get(PROOF_ENV);
        return env == null || env.isBlank() ? null : env.trim();
    }
}
