package dev.fence.hook;

import dev.fence.core.FencePolicy;
import dev.fence.core.Printable;
import dev.fence.core.Reason;
import dev.fence.core.RefUpdate;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Finds the pushed ref names that are symbolic refs, as git's receive-pack resolves them, and refuses
 * those that lead into fenced refs.
 *
 * <p>Git updates a symbolic ref's target, not the symbolic ref: with {@code refs/heads/alias} pointing
 * at {@code refs/heads/main}, a push to {@code alias} rewrites {@code main}. The hook sees only the name
 * {@code alias}, so judging it as {@code alias} would let a tokenless or foreign push through to {@code
 * main}. The rule here: a push to a symbolic ref is refused ({@link Reason#SYMBOLIC_REF}) when the pushed
 * name, or any ref it resolves through, or the ref it finally resolves to (which git creates when it does
 * not exist yet) is fenced (a name stored in a git namespace counting as the ref it is there, {@link
 * GitNamespace#fencedInside}), or when it cannot be resolved (a loop, more than {@value #MAX_DEPTH} levels,
 * a target that is no valid ref name). The pusher is told to push to the target's name instead.
 *
 * <p>One exception, as in git: when the same push also updates the final target with the same old and
 * new ids, receive-pack skips the symbolic ref's update ({@code check_aliased_updates}, after
 * pre-receive) and applies the target's, which is judged on its own line; the symbolic ref's line is then
 * dropped here. With different ids git refuses both, and so does this class.
 *
 * <p>Symbolic refs of the files backend are loose files {@code ref: <target>} (never in {@code
 * packed-refs}), read here directly, one stat per pushed ref (refs are not quarantined during
 * pre-receive). A repository with the reftable backend is asked through {@code git symbolic-ref} instead.
 * {@code GIT_NAMESPACE} applies as in receive-pack. Where the repository cannot be seen ({@code fence
 * serve}), the resolutions are the facts the hook that sent the push measured ({@link SymrefFacts}), and
 * the rule is the same. Not thread-safe; one instance per push.
 */
public final class SymbolicRefs {
    /**
     * The problem of a symbolic ref, in a push made in a git namespace, whose target is outside that
     * namespace (the curl shim says it in the same words).
     */
    static final String OUTSIDE_NAMESPACE = "its target is outside the push's git namespace";

    /**
     * Where resolutions come from: the repository's files (a hook), or the facts a hook sent (the server).
     */
    @FunctionalInterface
    public interface Resolver {
        /** The resolution of pushed name {@code ref}, or null when it is no symbolic ref. */
        Resolution resolve(String ref);
    }

    /**
     * A symbolic ref's resolution: the pushed name first, then each target in order; or why it fails.
     *
     * @param names the pushed name, then the targets git follows (at least the pushed name)
     * @param problem why git cannot resolve it, or null
     */
    public record Resolution(List<String> names, String problem) {
        public Resolution {
            names = List.copyOf(names);
            if (names.isEmpty()) {
                throw new IllegalArgumentException("a resolution names at least the pushed ref");
            }
        }
    }

    /** Most symbolic refs git follows in one resolution ({@code SYMREF_MAXDEPTH}). */
    static final int MAX_DEPTH = 5;

    private static final int MAX_REF_FILE_BYTES = 1 << 16;

    private final Resolver resolver;

    private SymbolicRefs(Resolver resolver) {
        this.resolver = resolver;
    }

    /** Symbolic refs as {@code resolver} resolves them. */
    public static SymbolicRefs resolvedBy(Resolver resolver) {
        return new SymbolicRefs(resolver);
    }

    /** The resolution of {@code ref} (null when it is no symbolic ref). */
    public Resolution resolve(String ref) {
        return resolver.resolve(ref);
    }

    /** The pushed names among {@code updates} that are symbolic refs, in push order. */
    public List<String> symbolic(List<RefUpdate> updates) {
        List<String> out = new ArrayList<>(0);
        for (RefUpdate u : updates) {
            if (!out.contains(u.ref()) && resolver.resolve(u.ref()) != null) {
                out.add(u.ref());
            }
        }
        return out;
    }

    /**
     * The symbolic refs of the repository a hook runs in.
     *
     * @param env the hook's environment ({@code GIT_NAMESPACE}; passed to git where git is asked)
     * @param gitDir the repository's git directory
     * @param git the git binary ({@link HookConfig#git()}), for reftable repositories
     */
    public static SymbolicRefs of(Map<String, String> env, Path gitDir, String git) {
        return new SymbolicRefs(
                new Files(gitDir, commonDir(gitDir), GitNamespace.prefix(GitNamespace.of(env)), env, git));
    }

    /**
     * Where the repository at {@code gitDir} keeps its shared refs ({@code refs/...}, {@code packed-refs}):
     * the directory its {@code commondir} file names (a linked worktree's git directory), else {@code gitDir}.
     */
    static Path commonDir(Path gitDir) {
        try {
            byte[] b = SmallFiles.readIfExists(gitDir.resolve("commondir"), MAX_REF_FILE_BYTES);
            if (b != null) {
                String s = new String(b, StandardCharsets.UTF_8).strip();
                if (!s.isEmpty()) {
                    return gitDir.resolve(s).normalize();
                }
            }
        } catch (IOException | RuntimeException e) {
            // Not a linked worktree's git directory, as far as can be read: the refs are under gitDir.
        }
        return gitDir;
    }

    /**
     * The refusal of a push to symbolic refs that {@code fence serve} did not judge (it could not be
     * asked, or refused the hook's configuration): without the server's verdict nobody decides whether
     * they lead into fenced refs, so every pushed symbolic ref is refused. The curl shim prints the same.
     *
     * @param refs the pushed names that are symbolic refs ({@link #symbolic}), not empty
     * @param refused the lines of the hook's own refusal of the push's fenced refs, or empty
     */
    public static List<String> unjudgedLines(String prefix, List<String> refs, List<String> refused) {
        List<String> out = new ArrayList<>();
        for (String ref : refs) {
            out.add(prefix + "REJECTED ref=" + ref + " reason=" + Reason.SYMBOLIC_REF.code());
        }
        out.addAll(refused);
        out.add(prefix + "fence: the fence server did not judge this push, so pushes to symbolic refs are refused"
                + " (git would update their targets, which may be fenced). Push to the target's name instead.");
        return out;
    }

    /** A pushed symbolic ref this class refuses. */
    public record Refusal(String ref, List<String> chain, String problem) {}

    /**
     * What to judge of a push, and what is refused outright.
     *
     * @param updates the updates to judge: the push's, less the symbolic refs git skips (see the class
     *     comment)
     * @param refusals the pushes to symbolic refs that lead into fenced refs (or cannot be resolved)
     */
    public record Screened(List<RefUpdate> updates, List<Refusal> refusals) {
        /** The lines to show the pusher when {@link #refusals()} is not empty. */
        public List<String> lines(String prefix) {
            List<String> out = new ArrayList<>();
            for (Refusal r : refusals) {
                out.add(prefix + "REJECTED ref=" + r.ref() + " reason=" + Reason.SYMBOLIC_REF.code());
            }
            for (Refusal r : refusals) {
                String target = r.chain().get(r.chain().size() - 1);
                if (r.problem() != null) {
                    out.add(prefix + "fence: " + r.ref() + " is a symbolic ref that cannot be resolved (" + r.problem()
                            + "); git would refuse to update it, and fence refuses the push.");
                } else if (GitNamespace.split(target)[0].isEmpty()) {
                    out.add(prefix + "fence: " + r.ref() + " is a symbolic ref to "
                            + String.join(" -> ", r.chain().subList(1, r.chain().size())) + ": git would update "
                            + target
                            + ", which fence guards under its own name. Push to " + target
                            + " itself instead (for example: git push origin <commit>:" + target
                            + ", with the lease options for " + target + ").");
                } else {
                    String[] stored = GitNamespace.split(target);
                    out.add(prefix + "fence: " + r.ref() + " is a symbolic ref to "
                            + String.join(" -> ", r.chain().subList(1, r.chain().size())) + ": git would update "
                            + target + ", which is " + stored[1] + " of git namespace " + stored[0]
                            + ", a ref fence guards there. Push to " + stored[1]
                            + " through that namespace (GIT_NAMESPACE=" + stored[0]
                            + ") instead, with the lease options for it.");
                }
            }
            out.add(prefix + "fence: the push was refused as a whole; nothing was recorded. Pushing under another"
                    + " name that points at the same ref is refused the same way.");
            return out;
        }
    }

    /**
     * Screens a push.
     *
     * @param policy the fenced refs; null to treat every ref as fenced (a hook that does not know the
     *     server's patterns)
     */
    public Screened screen(List<RefUpdate> updates, FencePolicy policy) {
        return screen(updates, policy, false);
    }

    /**
     * Screens a push in a repository that may ignore case in ref names.
     *
     * @param ignoreCase the repository ignores case ({@link CaseAliases#ignoresCase()}): a symbolic ref that
     *     leads to another spelling of a fenced ref leads into it
     */
    public Screened screen(List<RefUpdate> updates, FencePolicy policy, boolean ignoreCase) {
        List<RefUpdate> kept = null;
        List<Refusal> refusals = new ArrayList<>(0);
        Map<String, RefUpdate> byName = null;
        for (int i = 0; i < updates.size(); i++) {
            RefUpdate u = updates.get(i);
            Resolution c = resolver.resolve(u.ref());
            if (c == null) {
                if (kept != null) {
                    kept.add(u);
                }
                continue;
            }
            if (c.problem() == null && !fencedAlong(c.names(), policy, ignoreCase)) {
                if (kept != null) {
                    kept.add(u);
                }
                continue;
            }
            if (c.problem() == null) {
                if (byName == null) {
                    byName = new HashMap<>();
                    for (RefUpdate v : updates) {
                        byName.putIfAbsent(v.ref(), v);
                    }
                }
                RefUpdate target = byName.get(c.names().get(c.names().size() - 1));
                if (target != null
                        && target.oldId().equals(u.oldId())
                        && target.newId().equals(u.newId())) {
                    // git skips this line and applies the target's, which is judged as itself.
                    if (kept == null) {
                        kept = new ArrayList<>(updates.subList(0, i));
                    }
                    continue;
                }
            }
            refusals.add(new Refusal(u.ref(), c.names(), c.problem()));
            if (kept != null) {
                kept.add(u);
            }
        }
        return new Screened(kept == null ? updates : kept, refusals);
    }

    private static boolean fencedAlong(List<String> names, FencePolicy policy, boolean ignoreCase) {
        if (policy == null) {
            return true;
        }
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            // A name inside a git namespace is that namespace's ref (refs/namespaces/t1/HEAD -> t1's main).
            if (policy.isFenced(name)
                    || (ignoreCase && policy.isFencedIgnoringCase(name))
                    || GitNamespace.fencedInside(name, policy, ignoreCase)) {
                return true;
            }
        }
        return false;
    }

    /** The repository's own refs: loose files, or git for a reftable repository. */
    private static final class Files implements Resolver {
        private final Path gitDir;
        private final Path commonDir;
        private final String namespace;
        private final Map<String, String> env;
        private final String git;
        private final boolean reftable;

        Files(Path gitDir, Path commonDir, String namespace, Map<String, String> env, String git) {
            this.gitDir = gitDir;
            this.commonDir = commonDir;
            this.namespace = namespace;
            this.env = env;
            this.git = git;
            this.reftable = SmallFiles.exists(commonDir.resolve("reftable"));
        }

        @Override
        public Resolution resolve(String ref) {
            if (reftable) {
                return resolveWithGit(ref);
            }
            List<String> names = null;
            String name = namespace + ref;
            for (int depth = 0; depth < MAX_DEPTH; depth++) {
                String target;
                try {
                    target = readSymref(name);
                } catch (IOException e) {
                    if (names == null) {
                        // The pushed name itself cannot be read: git's own update reports it.
                        return null;
                    }
                    return new Resolution(names, "cannot read " + name + ": " + e.getMessage());
                }
                if (target == null) {
                    return names == null ? null : new Resolution(names, null);
                }
                if (names == null) {
                    names = new ArrayList<>(3);
                    names.add(ref);
                }
                if (outsideNamespace(target)) {
                    names.add(Printable.escape(target, 200));
                    return new Resolution(names, OUTSIDE_NAMESPACE);
                }
                if (!isSafeRefName(target)) {
                    names.add(Printable.escape(target, 200));
                    return new Resolution(names, "its target is not a valid ref name");
                }
                names.add(stripNamespace(target));
                name = target;
            }
            return new Resolution(names, "more than " + MAX_DEPTH + " levels of symbolic refs, or a loop");
        }

        /** The target of loose symbolic ref {@code name}, or null when {@code name} is no symbolic ref. */
        private String readSymref(String name) throws IOException {
            if (!isSafeRefName(name)) {
                return null;
            }
            // A target this JVM cannot name as git does (pushed names were checked by HostCharset): in a
            // Latin-1 locale café's file would be another file, and a chain through it judged as ending there.
            if (!HostCharset.canName(name)) {
                throw new IOException(HostCharset.problem(name));
            }
            Path file = (isPerWorktree(name) ? gitDir : commonDir).resolve(name);
            if (java.nio.file.Files.isSymbolicLink(file)) {
                // As git's files backend: a link whose text starts with "refs/" is a symbolic ref to that ref
                // (core.preferSymlinkRefs writes them so), whatever it points at on disk; any other link git
                // follows, to a ref this class cannot vouch for, so it is returned as a target git's rules
                // refuse (not a valid ref name).
                String text = java.nio.file.Files.readSymbolicLink(file).toString();
                return text.startsWith("refs/") ? text : "a symbolic link to " + text;
            }
            if (!SmallFiles.isFile(file)) {
                return null; // a packed ref, a ref that does not exist, or a directory of refs
            }
            byte[] b = SmallFiles.readIfExists(file, MAX_REF_FILE_BYTES);
            if (b == null) {
                throw new IOException("longer than any ref file git writes");
            }
            if (b.length < 4 || b[0] != 'r' || b[1] != 'e' || b[2] != 'f' || b[3] != ':') {
                return null;
            }
            // As git's files backend: "ref:", then whitespace, the target, trailing whitespace trimmed.
            int start = 4;
            while (start < b.length && isSpace(b[start])) {
                start++;
            }
            int end = b.length;
            while (end > start && isSpace(b[end - 1])) {
                end--;
            }
            return new String(b, start, end - start, StandardCharsets.UTF_8);
        }

        private Resolution resolveWithGit(String ref) {
            // git symbolic-ref ignores GIT_NAMESPACE (only receive-pack and upload-pack apply it): ask for the
            // stored name receive-pack would write.
            ProcessBuilder pb = new ProcessBuilder(git, "symbolic-ref", "-q", namespace + ref)
                    .directory(gitDir.toFile())
                    .redirectErrorStream(true);
            pb.environment().clear();
            pb.environment().putAll(env);
            pb.environment().put("LC_ALL", "C");
            try {
                Process p = pb.start();
                byte[] out = p.getInputStream().readAllBytes();
                if (!p.waitFor(4, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    return new Resolution(List.of(ref, ref), "git symbolic-ref did not answer");
                }
                String said = new String(out, StandardCharsets.UTF_8).strip();
                return switch (p.exitValue()) {
                    case 0 -> outsideNamespace(said)
                            ? new Resolution(List.of(ref, Printable.escape(said, 200)), OUTSIDE_NAMESPACE)
                            : new Resolution(
                                    List.of(ref, stripNamespace(said)),
                                    isSafeRefName(said) ? null : "its target is not a valid ref name");
                    case 1 -> null;
                    default -> new Resolution(
                            List.of(ref, ref), "git symbolic-ref failed: " + Printable.escape(said, 200));
                };
            } catch (IOException e) {
                return new Resolution(List.of(ref, ref), "cannot run git symbolic-ref: " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Resolution(List.of(ref, ref), "interrupted");
            }
        }

        /**
         * True when a push made in a git namespace reaches {@code target}, a ref outside it: the name that
         * would read as the namespace's own ref once its prefix is taken off (refs/heads/main) is another
         * ref, the repository's, and git's receive-pack refuses or fails on such an update.
         */
        private boolean outsideNamespace(String target) {
            return !namespace.isEmpty() && !target.startsWith(namespace);
        }

        private String stripNamespace(String target) {
            return !namespace.isEmpty() && target.startsWith(namespace) ? target.substring(namespace.length()) : target;
        }
    }

    /** Refs git keeps per worktree; everything else lives in the common directory. */
    private static boolean isPerWorktree(String name) {
        return !name.startsWith("refs/")
                || name.startsWith("refs/bisect/")
                || name.startsWith("refs/worktree/")
                || name.startsWith("refs/rewritten/");
    }

    /**
     * A name this class may turn into a path: {@code refs/...} or an all-caps root ref such as {@code
     * HEAD}, without {@code ..}, empty components, backslashes or control characters. Anything else is
     * no ref git would follow.
     */
    static boolean isSafeRefName(String name) {
        if (name.isEmpty() || name.length() > 1024) {
            return false;
        }
        if (!name.startsWith("refs/")) {
            for (int i = 0; i < name.length(); i++) {
                char c = name.charAt(i);
                if (!((c >= 'A' && c <= 'Z') || c == '_')) {
                    return false;
                }
            }
            return true;
        }
        if (name.endsWith("/") || name.contains("//") || name.contains("..") || name.endsWith(".lock")) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '\\' || c == ' ' || c == '~' || c == '^' || c == ':' || c == '?'
                    || c == '*' || c == '[') {
                return false;
            }
        }
        for (String part : name.split("/", -1)) {
            if (part.startsWith(".")) {
                return false;
            }
        }
        return true;
    }

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == 0x0b || b == 0x0c;
    }
}
