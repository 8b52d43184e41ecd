package dev.fence.cli;

import dev.fence.core.InvalidInputException;
import dev.fence.core.Names;
import dev.fence.core.Resources;
import picocli.CommandLine.Option;

/** {@code --resource NAME} or {@code --repo ID --ref REF}: which resource a command acts on. */
final class ResourceOptions {
    @Option(
            names = "--resource",
            paramLabel = "NAME",
            description = "Resource name, e.g. db/migrations or git:<repo-id>:refs/heads/main.")
    String resource;

    @Option(
            names = "--repo",
            paramLabel = "ID",
            description = "Repository id as the git host's hook sees it (GitLab project-<id>, GHES owner/repo,"
                    + " Gitea repo id, plain git: the id set by 'fence install'). Use with --ref.")
    String repo;

    @Option(
            names = {"--ref", "--branch"},
            paramLabel = "REF",
            description = "Full ref name (refs/heads/main) or branch name (main). Use with --repo.")
    String ref;

    /**
     * The resource name: {@code --resource}, or {@link Resources#forRef} of {@code --repo} and {@code
     * --ref}.
     *
     * @throws InvalidInputException unless exactly one form is given
     */
    String resource() {
        if (resource != null && (repo != null || ref != null)) {
            throw new InvalidInputException("give either --resource or --repo with --ref, not both");
        }
        if (resource != null) {
            return Names.require("resource", resource);
        }
        if (repo == null || ref == null) {
            throw new InvalidInputException("name the resource: --resource NAME, or --repo ID --ref REF");
        }
        return Resources.forRef(repo, ref);
    }
}
