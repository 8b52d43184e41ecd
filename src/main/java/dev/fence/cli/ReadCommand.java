package dev.fence.cli;

import dev.fence.files.SharedFiles;
import dev.fence.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code fence read}. */
@ExitCodes({ExitCode.OK, ExitCode.USAGE, ExitCode.INTERNAL})
@Command(
        name = "read",
        mixinStandardHelpOptions = true,
        description = {
            "Print a shared file's sha256 and content: the first line is 'sha256 <hex>' (64 zeros when",
            "the file does not exist), the content follows. Pass the hash to 'fence write",
            "--expected-sha256' so that the write is refused if someone changed the file meanwhile.",
            "2: bad input (a path outside --root, a symbolic link, fence's own lock or temporary file,",
            "a file over 16 MiB)."
        })
final class ReadCommand implements Callable<Integer> {
    private final Context ctx;

    @Option(names = "--path", required = true, paramLabel = "P", description = "The file to read.")
    String path;

    @Option(
            names = "--root",
            paramLabel = "DIR",
            description = "Only files under DIR may be read (default: the working directory).")
    String root;

    @Option(names = "--json", description = "Print one JSON object: path, sha256, exists, content.")
    boolean json;

    ReadCommand(Context ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        SharedFiles.Content c =
                SharedFiles.read(root == null ? ctx.cwd() : ctx.cwd().resolve(root), java.nio.file.Path.of(path));
        String text = c.exists() ? new String(c.content(), StandardCharsets.UTF_8) : "";
        if (json) {
            Map<String, Object> m = Json.object();
            m.put("path", c.path().toString());
            m.put("sha256", c.sha256());
            m.put("exists", c.exists());
            m.put("content", c.exists() ? text : null);
            ctx.out().println(Json.write(m));
            return ExitCode.OK.code();
        }
        ctx.out().println("sha256 " + c.sha256() + (c.exists() ? "" : " (no such file: write it with this hash)"));
        ctx.out().print(text);
        ctx.out().flush();
        return ExitCode.OK.code();
    }
}
