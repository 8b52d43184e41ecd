package dev.fence.core;

import java.util.List;
import java.util.OptionalLong;

/**
 * The push options fence reads: {@code fence=<token>} and {@code fence-proof=<proof>}. Other options
 * (GitLab's {@code ci.skip}, …) are kept only for the record and otherwise ignored.
 *
 * @param token the token, when the push carried {@code fence=}
 * @param proof the proof, when the push carried {@code fence-proof=}; never printed
 * @param all every option as received, in order (for diagnostics only; may contain the proof)
 */
public record PushOptions(OptionalLong token, String proof, List<String> all) {
    public PushOptions {
        all = List.copyOf(all);
    }

    /** A push that carried no options. */
    public static PushOptions none() {
        return new PushOptions(OptionalLong.empty(), null, List.of());
    }

    @Override
    public String toString() {
        return "PushOptions[token=" + token + ", proof=" + (proof == null ? "none" : "(hidden)") + "]";
    }
}
