package dev.fence.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.codegen.docgen.manpage.ManPageGenerator;

/**
 * Build-time generator of the bash/zsh completion script and the AsciiDoc man page sources, both read
 * from the same command model users run. The build calls it in the {@code package} phase (see {@code
 * pom.xml}); it is not part of the shipped jar, and it needs {@code picocli-codegen} on the class path.
 *
 * <p>The subcommands are built by {@link CommandFactory}, which needs a {@link Context}, so the picocli
 * generators cannot instantiate the command classes themselves; this class hands them a command tree built
 * with an inert context (no input, discarded output, empty environment). Nothing is executed.
 */
public final class GenerateDocs {
    private GenerateDocs() {}

    /**
     * Writes the completion script and the man page sources.
     *
     * @param args the completion script's path, then the directory for {@code *.adoc} man page sources
     * @throws IOException when a file cannot be written
     * @throws IllegalArgumentException when the arguments are not two paths
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            throw new IllegalArgumentException("usage: GenerateDocs COMPLETION_FILE MAN_DIR");
        }
        Path completion = Path.of(args[0]).toAbsolutePath();
        Path manDir = Path.of(args[1]).toAbsolutePath();
        CommandLine fence = commandLine();

        Files.createDirectories(completion.getParent());
        Files.writeString(completion, AutoComplete.bash("fence", fence), StandardCharsets.UTF_8);

        Files.createDirectories(manDir);
        // One page per command and subcommand (fence.adoc, fence-lease-acquire.adoc, ...); overwrite stale ones.
        int status =
                ManPageGenerator.generateManPage(manDir.toFile(), null, new boolean[0], true, fence.getCommandSpec());
        if (status != 0) {
            throw new IllegalStateException("man page generation failed with status " + status);
        }
    }

    /** The real command tree, built with a context that reads nothing and writes nowhere. */
    static CommandLine commandLine() {
        PrintWriter discard = new PrintWriter(Writer.nullWriter());
        Context inert =
                new Context(InputStream.nullInputStream(), discard, discard, Map.of(), Clock.systemUTC(), Path.of("/"));
        return Main.commandLine(inert);
    }
}
