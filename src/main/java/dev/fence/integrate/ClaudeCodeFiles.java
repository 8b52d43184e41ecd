package dev.fence.integrate;

import dev.fence.core.ConfigException;
import dev.fence.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The two project files {@code fence integrate claude-code} writes: {@code .claude/settings.json} (the
 * hooks) and {@code .mcp.json} (the {@code fence mcp} server). Each is merged, never replaced: every key,
 * hook and server that is not fence's stays as it was, in its order; fence's own entries are taken out
 * and put back fresh, so running it again changes nothing and {@code remove} takes out exactly them.
 *
 * <p>A hook is fence's when its command runs {@code … integrate claude-code hook …}; the server is
 * fence's under the name {@link #SERVER_NAME}.
 */
public final class ClaudeCodeFiles {
    /** The name of the server in {@code .mcp.json}. */
    public static final String SERVER_NAME = "fence";

    /** What marks a hook command as fence's. */
    static final String MARK = " integrate claude-code hook ";

    /**
     * What to write.
     *
     * @param fence the command that runs fence in the hooks and the server entry (e.g. {@code fence})
     * @param access the options every fence command there takes to reach leases ({@code --store URL} or
     *     {@code --server URL}), or empty to leave it to the environment
     * @param holder the lease holder
     * @param repoId the repository id for branches, or null
     * @param ttl the TTL the hooks renew to, as a duration option value
     * @param grants the directory where the server keeps the holder's grants and the heartbeat hooks read
     *     them ({@code --grants}), as an absolute path, or null to leave it out
     */
    public record Options(String fence, List<String> access, String holder, String repoId, String ttl, String grants) {
        public Options {
            access = List.copyOf(access);
        }
    }

    /**
     * One file's change.
     *
     * @param before its text now, or null when it does not exist
     * @param after its new text, or null to delete it
     */
    public record Change(Path file, String before, String after) {
        public boolean changes() {
            return !Objects.equals(before, after);
        }
    }

    private ClaudeCodeFiles() {}

    /**
     * The changes that install ({@code remove} false) or remove fence's entries in {@code project}.
     *
     * @throws ConfigException when a file exists but is not a JSON object
     */
    public static List<Change> plan(Path project, Options o, boolean remove) {
        List<Change> out = new ArrayList<>();
        Path settings = project.resolve(".claude").resolve("settings.json");
        String before = read(settings);
        Map<String, Object> root = parse(settings, before);
        mergeHooks(root, o, remove);
        out.add(new Change(settings, before, render(root, before)));
        Path mcp = project.resolve(".mcp.json");
        String mcpBefore = read(mcp);
        Map<String, Object> mcpRoot = parse(mcp, mcpBefore);
        mergeServer(mcpRoot, o, remove);
        out.add(new Change(mcp, mcpBefore, render(mcpRoot, mcpBefore)));
        return out;
    }

    /** Writes {@code changes} (each file replaced whole, atomically); returns the files changed. */
    public static List<Path> apply(List<Change> changes) {
        List<Path> done = new ArrayList<>();
        for (Change c : changes) {
            if (!c.changes()) {
                continue;
            }
            try {
                // A link (a settings file shared by several projects) is written where it points and stays a
                // link; emptied, the file it points to keeps an empty object rather than fence's entries.
                boolean link = Files.isSymbolicLink(c.file());
                Path target = link ? c.file().toRealPath() : c.file();
                String after = c.after() == null && link ? "{}\n" : c.after();
                if (after == null) {
                    Files.deleteIfExists(target);
                } else {
                    Path dir = target.toAbsolutePath().getParent();
                    Files.createDirectories(dir);
                    Path tmp = Files.createTempFile(dir, "." + target.getFileName(), ".tmp");
                    try {
                        Files.writeString(tmp, after);
                        if (Files.exists(target)) {
                            // The replaced file's mode, not the temporary file's 0600.
                            Files.setPosixFilePermissions(tmp, Files.getPosixFilePermissions(target));
                        }
                        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    } finally {
                        Files.deleteIfExists(tmp);
                    }
                }
            } catch (IOException e) {
                throw new ConfigException("cannot write " + c.file() + ": " + e.getMessage(), e);
            }
            done.add(c.file());
        }
        return done;
    }

    /** The hook commands, by event: what {@code settings.json} gets. */
    static Map<String, List<Map<String, Object>>> hookGroups(Options o) {
        Map<String, List<Map<String, Object>>> events = new LinkedHashMap<>();
        events.put("SessionStart", List.of(group("compact|resume", command(o, "session-start"))));
        events.put(
                "PreToolUse", List.of(group("*", command(o, "pre-tool-use")), group("Bash", command(o, "guard-bash"))));
        events.put("PostToolUse", List.of(group("*", command(o, "post-tool-use"))));
        return events;
    }

    /** The server entry: what {@code .mcp.json} gets under {@link #SERVER_NAME}. */
    static Map<String, Object> server(Options o) {
        List<String> args = new ArrayList<>();
        args.add("mcp");
        args.add("--holder");
        args.add(o.holder());
        args.addAll(o.access());
        if (o.repoId() != null) {
            args.add("--repo");
            args.add(o.repoId());
        }
        if (o.grants() != null) {
            args.add("--grants");
            args.add(o.grants());
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "stdio");
        m.put("command", o.fence());
        m.put("args", args);
        return m;
    }

    private static String command(Options o, String event) {
        List<String> words = new ArrayList<>();
        words.add(o.fence());
        words.add("integrate");
        words.add("claude-code");
        words.add("hook");
        words.add(event);
        words.add("--holder");
        words.add(o.holder());
        if (!event.equals("guard-bash")) {
            words.addAll(o.access());
        }
        if (event.endsWith("-tool-use")) {
            words.add("--ttl");
            words.add(o.ttl());
            if (o.grants() != null) {
                words.add("--grants");
                words.add(o.grants());
            }
        }
        if (event.equals("guard-bash") && o.repoId() != null) {
            words.add("--repo");
            words.add(o.repoId());
        }
        StringBuilder b = new StringBuilder();
        for (String w : words) {
            if (b.length() > 0) {
                b.append(' ');
            }
            b.append(quote(w));
        }
        return b.toString();
    }

    /** A word as bash reads it back unchanged: bare when it is safe, else in single quotes. */
    static String quote(String w) {
        if (!w.isEmpty() && w.matches("[A-Za-z0-9_./:@%+=,-]+")) {
            return w;
        }
        return "'" + w.replace("'", "'\\''") + "'";
    }

    private static Map<String, Object> group(String matcher, String command) {
        Map<String, Object> hook = new LinkedHashMap<>();
        hook.put("type", "command");
        hook.put("command", command);
        hook.put("timeout", 30);
        Map<String, Object> g = new LinkedHashMap<>();
        g.put("matcher", matcher);
        g.put("hooks", new ArrayList<>(List.of(hook)));
        return g;
    }

    static boolean ours(Object hook) {
        return hook instanceof Map<?, ?> m && m.get("command") instanceof String c && c.contains(MARK);
    }

    @SuppressWarnings("unchecked")
    private static void mergeHooks(Map<String, Object> root, Options o, boolean remove) {
        Object h = root.get("hooks");
        if (h != null && !(h instanceof Map)) {
            throw new ConfigException(".claude/settings.json: \"hooks\" is not an object; fix it by hand first");
        }
        Map<String, Object> hooks = h == null ? new LinkedHashMap<>() : (Map<String, Object>) h;
        for (String event : List.of("SessionStart", "PreToolUse", "PostToolUse")) {
            Object e = hooks.get(event);
            if (e != null && !(e instanceof List)) {
                throw new ConfigException(".claude/settings.json: hooks." + event + " is not a list");
            }
            List<Object> groups = e == null ? new ArrayList<>() : (List<Object>) e;
            dropOurs(groups);
            if (!remove) {
                groups.addAll(hookGroups(o).get(event));
            }
            if (groups.isEmpty()) {
                hooks.remove(event);
            } else {
                hooks.put(event, groups);
            }
        }
        if (hooks.isEmpty()) {
            root.remove("hooks");
        } else {
            root.put("hooks", hooks);
        }
    }

    /** Takes fence's hooks out of every matcher group, and a group out when nothing else was in it. */
    @SuppressWarnings("unchecked")
    private static void dropOurs(List<Object> groups) {
        for (Iterator<Object> it = groups.iterator(); it.hasNext(); ) {
            Object g = it.next();
            if (!(g instanceof Map<?, ?> group) || !(group.get("hooks") instanceof List<?> list)) {
                continue;
            }
            boolean had = list.stream().anyMatch(ClaudeCodeFiles::ours);
            if (!had) {
                continue;
            }
            ((List<Object>) list).removeIf(ClaudeCodeFiles::ours);
            if (list.isEmpty()) {
                it.remove();
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static void mergeServer(Map<String, Object> root, Options o, boolean remove) {
        Object s = root.get("mcpServers");
        if (s != null && !(s instanceof Map)) {
            throw new ConfigException(".mcp.json: \"mcpServers\" is not an object; fix it by hand first");
        }
        Map<String, Object> servers = s == null ? new LinkedHashMap<>() : (Map<String, Object>) s;
        if (remove) {
            servers.remove(SERVER_NAME);
        } else {
            servers.put(SERVER_NAME, server(o));
        }
        if (servers.isEmpty()) {
            root.remove("mcpServers");
        } else {
            root.put("mcpServers", servers);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new ConfigException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static Map<String, Object> parse(Path file, String text) {
        if (text == null || text.isBlank()) {
            return new LinkedHashMap<>();
        }
        try {
            return Json.readObject(text);
        } catch (IOException e) {
            throw new ConfigException(file + " is not a JSON object (" + firstLine(e.getMessage()) + "); fence merges"
                    + " into it and will not overwrite it: fix it by hand first");
        }
    }

    /** The file's new text: unchanged when the content is, none when nothing is left in a file. */
    private static String render(Map<String, Object> root, String before) {
        if (root.isEmpty()) {
            return before == null || before.isBlank() ? before : null;
        }
        String after = Json.writePretty(root);
        if (before != null) {
            if (parse(Path.of("."), before).equals(root)) {
                return before;
            }
        }
        return after;
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }
}
