package dev.fence.install;

import java.util.List;

/** What an installer did, or why it did nothing. */
public sealed interface InstallResult {
    /**
     * The installer did its work.
     *
     * @param done one line per thing written, changed or found already in place, in order
     * @param warnings things the administrator should know about the result (may be empty)
     * @param nextSteps what the administrator does next, in order (may be empty)
     */
    record Installed(List<String> done, List<String> warnings, List<String> nextSteps) implements InstallResult {
        public Installed {
            done = List.copyOf(done);
            warnings = List.copyOf(warnings);
            nextSteps = List.copyOf(nextSteps);
        }
    }

    /**
     * The installer changed nothing, because it would have had to replace files fence did not write.
     *
     * @param reason the explanation, naming the files and how to go ahead ({@code --force})
     */
    record Refused(String reason) implements InstallResult {}
}
