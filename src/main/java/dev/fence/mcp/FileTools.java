package dev.fence.mcp;

import dev.fence.core.FencedWrites;
import dev.fence.files.SharedFiles;
import dev.fence.git.JvmCharset;
import dev.fence.json.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code read_file} and {@code write_file}: {@code fence read} and {@code fence write} as tools, through
 * {@link SharedFiles}, confined to one root. A write names the sha256 it read and goes under the holder's
 * grant on the file's resource, which the server keeps.
 */
public final class FileTools {
    private FileTools() {}

    /**
     * The two tools.
     *
     * @param root the directory the tools may read and write in, pinned now ({@link SharedFiles.Root})
     * @throws dev.fence.core.InvalidInputException when it does not exist
     * @param defaultResource the resource a write goes under when the call names none, or null
     * @param writes the fenced writes on the lease store, or null: then only {@code read_file}
     */
    public static List<FenceTools.Extra> of(Path root, String defaultResource, FencedWrites writes) {
        // Pinned now: a root renamed away and replaced while the server runs is refused, not followed.
        SharedFiles.Root pinned = SharedFiles.Root.pin(root);
        FenceTools.Extra read = new FenceTools.Extra() {
            @Override
            public FenceTools.Tool tool() {
                Map<String, Object> p = new LinkedHashMap<>();
                p.put("path", FenceTools.property("string", "The file, relative to the shared root."));
                return new FenceTools.Tool(
                        "read_file",
                        "Read a shared file and its sha256. Write it back with write_file naming that sha256 as"
                                + " expected_sha256; a file that does not exist reads as 64 zeros.",
                        FenceTools.schema(p, List.of("path")));
            }

            @Override
            public ToolResult call(Map<String, Object> arguments, FenceTools.Grants grants) {
                try {
                    Arguments a = new Arguments("read_file", arguments, Set.of("path"));
                    String path = a.string("path", true);
                    SharedFiles.Content c = SharedFiles.read(pinned, path(path));
                    Map<String, Object> m = Json.object();
                    m.put("path", path);
                    m.put("sha256", c.sha256());
                    m.put("exists", c.exists());
                    String text = c.exists() ? new String(c.content(), StandardCharsets.UTF_8) : null;
                    m.put("content", text);
                    return ToolResult.ok(
                            List.of(
                                    "sha256 " + c.sha256()
                                            + (c.exists() ? "" : " (no such file: write it with this hash)"),
                                    text == null ? "" : text),
                            m);
                } catch (RuntimeException e) {
                    return FenceTools.failure(e);
                }
            }
        };
        if (writes == null) {
            return List.of(read);
        }
        FenceTools.Extra write = new FenceTools.Extra() {
            @Override
            public FenceTools.Tool tool() {
                Map<String, Object> p = new LinkedHashMap<>();
                p.put("path", FenceTools.property("string", "The file, relative to the shared root."));
                p.put("content", FenceTools.property("string", "The whole new content."));
                p.put(
                        "expected_sha256",
                        FenceTools.property(
                                "string", "The sha256 read_file gave you (64 zeros: the file must not exist yet)."));
                p.put(
                        "resource",
                        FenceTools.property(
                                "string",
                                "The resource your lease is on"
                                        + (defaultResource == null ? "." : " (default: " + defaultResource + ").")));
                return new FenceTools.Tool(
                        "write_file",
                        "Replace a shared file under your lease, only if it is still as you read it. If the"
                                + " result is FENCED (fenced=true) nothing was written: the file changed since you"
                                + " read it or your lease is gone. Re-read it with read_file and re-plan; never"
                                + " write again with the new hash without looking at what changed.",
                        FenceTools.schema(
                                p,
                                defaultResource == null
                                        ? List.of("path", "content", "expected_sha256", "resource")
                                        : List.of("path", "content", "expected_sha256")));
            }

            @Override
            public ToolResult call(Map<String, Object> arguments, FenceTools.Grants grants) {
                try {
                    Arguments a = new Arguments(
                            "write_file", arguments, Set.of("path", "content", "expected_sha256", "resource"));
                    String path = a.string("path", true);
                    String content = a.text("content");
                    String expected = a.string("expected_sha256", true);
                    String resource = a.has("resource") ? a.string("resource", true) : defaultResource;
                    if (resource == null) {
                        throw new Arguments.Invalid(
                                "resource",
                                "write_file needs the argument resource: the"
                                        + " resource your lease on this file is on");
                    }
                    FenceTools.plainResource(resource, null);
                    if (!expected.matches("(?i)[0-9a-f]{64}")) {
                        throw new Arguments.Invalid(
                                "expected_sha256",
                                "argument expected_sha256 must be 64 hex digits (read_file gives it); got '"
                                        + (expected.length() > 70 ? expected.substring(0, 70) + "..." : expected)
                                        + "'");
                    }
                    String reread = "read_file {\"path\": \"" + path + "\"}";
                    return grants.under(resource, reread, (token, proof) -> {
                        SharedFiles.Outcome o = new SharedFiles(writes)
                                .write(new SharedFiles.Request(
                                        root,
                                        path(path),
                                        path,
                                        expected,
                                        content.getBytes(StandardCharsets.UTF_8),
                                        resource,
                                        grants.holder(),
                                        token,
                                        proof,
                                        pinned));
                        if (o instanceof SharedFiles.Outcome.Refused r) {
                            return ToolResult.fenced(r.fenced(), reread);
                        }
                        SharedFiles.Outcome.Written w = (SharedFiles.Outcome.Written) o;
                        Map<String, Object> m = Json.object();
                        m.put("written", true);
                        m.put("path", path);
                        m.put("resource", resource);
                        m.put("sha256", w.newSha256());
                        return ToolResult.ok(
                                List.of("Wrote " + path + " under your lease on " + resource + "; its sha256 is now "
                                        + w.newSha256() + "."),
                                m);
                    });
                } catch (RuntimeException e) {
                    return FenceTools.failure(e);
                }
            }
        };
        return List.of(read, write);
    }

    /**
     * The argument {@code path} as a path: one the file system cannot take (a NUL), or that this server's
     * locale would name as other bytes than the agent's ({@link JvmCharset}), is a bad argument.
     */
    private static Path path(String path) {
        if (!JvmCharset.carries(path)) {
            throw new Arguments.Invalid(
                    "path", "argument path has characters beyond ASCII, and " + JvmCharset.remedy());
        }
        try {
            return Path.of(path);
        } catch (InvalidPathException e) {
            throw new Arguments.Invalid("path", "argument path is not a file name: " + e.getReason());
        }
    }
}
