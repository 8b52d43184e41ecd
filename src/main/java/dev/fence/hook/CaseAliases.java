package dev.fence.hook;

import dev.fence.core.ConfigException;
import dev.fence.core.FencePolicy;
import dev.fence.core.Globs;
import dev.fence.core.Printable;
import dev.fence.core.Reason;
import dev.fence.core.RefFolding;
import dev.fence.core.RefUpdate;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Spellings of one ref on a repository whose file system ignores case (macOS, Windows; git writes {@code
 * core.ignorecase = true} into such a repository's config): git's files backend keeps a ref as a file
 * named after it, so {@code refs/heads/MAIN}, {@code refs/HEADS/main} and {@code refs/heads/main} are one
 * file there; on macOS so are the composed and decomposed spellings of {@code café}, and a name with a code
 * point HFS+ passes over and the name without it; on Windows so are {@code refs/heads./main} and {@code
 * refs/heads/main} ({@link RefFolding}). fence names a resource after the ref as pushed, so each spelling
 * would be judged as a ref of its own (or, outside the fenced patterns, not at all) while git writes the one
 * file: a push by another spelling would move a fenced branch under no lease and leave nothing on its
 * record.
 *
 * <p>The rule ({@link #refusals}, {@link Reason#REF_CASE_ALIAS}), on such a repository only: a pushed ref
 * that is not fenced as spelled but whose fold matches a fenced pattern is refused; so is a pushed ref
 * that is fenced as spelled when the repository (or the same push) has a fenced ref spelled differently
 * that is the same file, or that leads to it through a directory spelled differently ({@code
 * refs/heads/feature/y} where {@code refs/heads/Feature/x} exists would be written into {@code
 * refs/heads/Feature/} and listed as {@code refs/heads/Feature/y}). The pusher is told the spelling fence
 * guards. Only spellings that are themselves fenced count, so a ref outside the patterns cannot close a
 * fenced branch by taking its directory's name first. Where the file system respects case (Linux's
 * default) every spelling is a ref of its own and nothing here applies.
 *
 * <p>A git namespace is stored as directories too ({@code refs/namespaces/t1/}), so on such a repository
 * {@code GIT_NAMESPACE=T1} writes namespace {@code t1}'s refs, while fence names the push's resources
 * {@code <repo>//T1}: resources with no lease and no history of their own. So where the repository has the
 * namespace, or a leading part of it, spelled otherwise, every pushed ref that is fenced, or whose fold is,
 * is refused too, and the pusher is told the namespace's spelling ({@link #refusals(List, FencePolicy,
 * String, String)}).
 *
 * <p>What a hook measures in its repository ({@link #measure}): whether it ignores case ({@code
 * core.ignorecase} in its config, read as {@link GitConfigFile} reads it, or a file system on which {@code
 * head} finds {@code HEAD}), and for each pushed ref the existing spellings of it and of its directories
 * that differ from the pushed one: the loose refs' directories along the pushed name, and {@code
 * packed-refs}; for a namespaced push also the spellings of its namespace's leading parts that differ from
 * the pushed one, from the same two places. No process is started. {@code fence serve} cannot see the
 * repository: a hook in server mode sends these as facts ({@link #facts}, {@link #namespaceFacts}, {@value
 * #IGNORECASE}, {@value #SPELLING} and {@value #NAMESPACE_SPELLING}, which the curl shim writes too), and the
 * server judges them by the same rule ({@link #parse}). A caller that sends no {@value #NAMESPACE_SPELLING}
 * fact (a shim older than that fact) gets the judgement it had before it. A client that compares
 * ASCII letters only (the shim: bash folds no other) says so ({@value #ASCII}); for it, a fenced ref's
 * components that hold other characters, or end with a dot, must be spelled as their fold (lower case,
 * composed, without the code points HFS+ passes over, without the dot), the one spelling two such clients
 * cannot disagree on: such a component that is not its own fold is refused, since the client cannot have
 * looked for the repository's other spellings of it.
 *
 * <p>Immutable and thread-safe.
 */
public final class CaseAliases {
    /** The form field (and JSON field) that says the repository ignores case: {@value #FULL} or {@value #ASCII}. */
    public static final String IGNORECASE = "ignorecase";

    /** The form field (and, pluralised, the JSON array) of a fact: {@code <pushed ref> <existing spelling>}. */
    public static final String SPELLING = "refcase";

    /**
     * The form field (and, pluralised, the JSON array) of a fact about a namespaced push: an existing spelling
     * of its namespace, or of the namespace's first components, that differs from {@code GIT_NAMESPACE}'s, in
     * {@code GIT_NAMESPACE}'s form ({@code t1/t2}).
     */
    public static final String NAMESPACE_SPELLING = "nscase";

    /** {@value #IGNORECASE}: the spellings were compared by their folds ({@link RefFolding}). */
    public static final String FULL = "true";

    /** {@value #IGNORECASE}: the spellings were compared by their ASCII letters only. */
    public static final String ASCII = "ascii";

    private static final CaseAliases NONE = new CaseAliases(null, Map.of(), List.of());

    /** Null when the repository respects case; else {@link #FULL} or {@link #ASCII}. */
    private final String folding;

    /** Pushed ref → existing spellings (of it, or of a directory along it) that differ from it. */
    private final Map<String, List<String>> spellings;

    /** Existing spellings of the pushed namespace, or of its first components, that differ from it. */
    private final List<String> namespaces;

    private CaseAliases(String folding, Map<String, List<String>> spellings, List<String> namespaces) {
        this.folding = folding;
        this.spellings = spellings;
        this.namespaces = namespaces;
    }

    /** A repository that respects case, or one nobody measured: no spelling is another's. */
    public static CaseAliases none() {
        return NONE;
    }

    /** True when the repository ignores case in ref names. */
    public boolean ignoresCase() {
        return folding != null;
    }

    /**
     * True when the repository at {@code gitDir} ignores case in ref names: {@code core.ignorecase} is true
     * in its config, or its file system finds {@code HEAD} by the name {@code head} (a repository made where
     * case counted and moved to where it does not keeps {@code core.ignorecase = false}, and git then
     * trusts the file system all the same). A config that cannot be read counts as true: that only refuses
     * more spellings.
     */
    public static boolean ignoresCase(Path gitDir) {
        Path dir = gitDir.toAbsolutePath();
        try {
            Optional<String> v = GitConfigFile.get(dir.resolve("config"), "core", "ignorecase");
            if (v.isPresent() && GitConfigFile.isTrue(v.get())) {
                return true;
            }
        } catch (ConfigException e) {
            return true;
        }
        return SmallFiles.exists(dir.resolve("head")) && SmallFiles.exists(dir.resolve("HEAD"));
    }

    /**
     * What the repository at {@code gitDir} says about the pushed refs' spellings; {@link #none()} where it
     * respects case.
     *
     * @param env the hook's environment ({@code GIT_NAMESPACE}: a namespaced push's refs are stored under
     *     {@code refs/namespaces/})
     */
    public static CaseAliases measure(Map<String, String> env, Path gitDir, List<RefUpdate> updates) {
        if (updates.isEmpty() || !ignoresCase(gitDir)) {
            return NONE;
        }
        List<String> pushed = distinctRefs(updates);
        String ns = GitNamespace.of(env);
        String namespace = GitNamespace.prefix(ns);
        Path common = SymbolicRefs.commonDir(gitDir.toAbsolutePath());
        List<String> existing = new ArrayList<>();
        Map<String, Map<String, List<String>>> listings = new HashMap<>();
        File top = new File(common.toFile(), namespace.isEmpty() ? "." : namespace);
        for (String ref : pushed) {
            loose(top, "", ref.split("/", -1), 0, listings, existing);
        }
        // The namespace's directories are looked for as a ref's are: its stored prefix is a path below refs/.
        List<String> stored = null;
        String prefixPath = namespace.isEmpty() ? null : namespace.substring(0, namespace.length() - 1);
        if (prefixPath != null) {
            stored = new ArrayList<>();
            loose(common.toFile(), "", prefixPath.split("/", -1), 0, listings, stored);
        }
        packed(common.resolve("packed-refs"), namespace, existing, stored);
        List<String> namespaces = List.of();
        if (prefixPath != null) {
            namespaces =
                    namespaceSpellings(ns, aliases(List.of(prefixPath), stored).get(prefixPath));
        }
        return new CaseAliases(FULL, aliases(pushed, existing), namespaces);
    }

    /**
     * {@code spellings} (stored prefixes, {@code refs/namespaces/t1/refs}) as namespaces in {@code
     * GIT_NAMESPACE}'s form, each once, without those that spell {@code ns}'s components as it does (a
     * difference in git's own {@code refs/namespaces/} between them, which git never writes otherwise).
     */
    private static List<String> namespaceSpellings(String ns, List<String> spellings) {
        if (spellings == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>(1);
        for (String s : spellings) {
            String other = GitNamespace.split(s + "/")[0];
            String respelled = other.isEmpty() ? null : respell(ns, other);
            if (respelled != null && !respelled.equals(ns) && !out.contains(other)) {
                out.add(other);
            }
        }
        return out;
    }

    /** The value of {@value #IGNORECASE} to send; null for a repository that respects case (send nothing). */
    public String folding() {
        return folding;
    }

    /** The {@value #SPELLING} facts to send, each {@code <pushed ref> <existing spelling>}. */
    public List<String> facts() {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : spellings.entrySet()) {
            for (String s : e.getValue()) {
                out.add(e.getKey() + " " + s);
            }
        }
        return out;
    }

    /** The {@value #NAMESPACE_SPELLING} facts to send: the namespace's other spellings, as namespaces. */
    public List<String> namespaceFacts() {
        return namespaces;
    }

    /** The facts a hook that measured no namespace sent ({@link #parse(String, List, List)} without any). */
    public static CaseAliases parse(String ignorecase, List<String> facts) {
        return parse(ignorecase, facts, List.of());
    }

    /**
     * The facts a hook sent.
     *
     * @param ignorecase {@value #FULL}, {@value #ASCII}, or null or {@code false} for a repository that
     *     respects case
     * @param facts the {@value #SPELLING} facts
     * @param namespaceFacts the {@value #NAMESPACE_SPELLING} facts (empty from a caller that sends none: then
     *     no namespace is taken for another's spelling)
     * @throws IllegalArgumentException when a value is none of these, a fact is not two names, or a namespace
     *     fact is not a namespace (components joined by {@code /}, none empty, no space)
     */
    public static CaseAliases parse(String ignorecase, List<String> facts, List<String> namespaceFacts) {
        String folding;
        if (ignorecase == null || ignorecase.equals("false")) {
            folding = null;
        } else if (ignorecase.equals(FULL) || ignorecase.equals(ASCII)) {
            folding = ignorecase;
        } else {
            throw new IllegalArgumentException(IGNORECASE + " is " + FULL + ", " + ASCII + " or false, not '"
                    + Printable.escape(ignorecase, 40) + "'");
        }
        Map<String, List<String>> spellings = new LinkedHashMap<>();
        for (String f : facts) {
            String[] parts = f.strip().split(" ", -1);
            if (parts.length != 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
                throw new IllegalArgumentException(SPELLING + " facts are '<pushed ref> <existing spelling>'");
            }
            List<String> given = spellings.get(parts[0]);
            if (given == null) {
                given = new ArrayList<>(1);
                spellings.put(parts[0], given);
            }
            given.add(parts[1]);
        }
        List<String> namespaces = new ArrayList<>(namespaceFacts.size());
        for (String f : namespaceFacts) {
            String ns = f.strip();
            if (ns.isEmpty() || ns.contains(" ") || ns.startsWith("/") || ns.endsWith("/") || ns.contains("//")) {
                throw new IllegalArgumentException(
                        NAMESPACE_SPELLING + " facts are a namespace, its components joined by '/'");
            }
            namespaces.add(ns);
        }
        // Spellings of a repository that respects case are refs of their own.
        return folding == null ? NONE : new CaseAliases(folding, spellings, namespaces);
    }

    /** {@link #refusals(List, FencePolicy, String, String)} of a push outside any namespace. */
    public List<String> refusals(List<RefUpdate> updates, FencePolicy policy, String prefix) {
        return refusals(updates, policy, prefix, "");
    }

    /**
     * The refusals of the pushed refs that are another spelling of a fenced ref: a {@code REJECTED}
     * line and a sentence for each. Empty when there is none, and always where the repository respects
     * case. Where the repository has the push's namespace (or its first components) spelled otherwise, each
     * pushed ref that is fenced, or whose fold is, is refused as written into that namespace, which the
     * sentence names ({@code GIT_NAMESPACE=<its spelling>}).
     *
     * @param namespace the push's namespace ({@code GIT_NAMESPACE}, components joined by {@code /}); empty
     *     for none
     */
    public List<String> refusals(List<RefUpdate> updates, FencePolicy policy, String prefix, String namespace) {
        if (folding == null) {
            return List.of();
        }
        List<String> pushed = distinctRefs(updates);
        Map<String, List<String>> together = pushed.size() > 1 ? aliases(pushed, pushed) : Map.of();
        String guardedNamespace = namespace.isEmpty() ? null : otherSpelling(namespace, namespaces);
        List<String> lines = new ArrayList<>();
        for (String ref : pushed) {
            String guarded = fencedSpelling(ref, spellings.get(ref), policy);
            boolean inPush = false;
            if (guarded == null) {
                guarded = fencedSpelling(ref, together.get(ref), policy);
                inPush = guarded != null;
            }
            String why;
            if (guardedNamespace != null && (policy.isFenced(ref) || foldsIntoFenced(ref, policy))) {
                // Checked first: whatever the ref's own spelling, git writes it into the other namespace.
                String[] shown = shown(namespace, guardedNamespace);
                why = "GIT_NAMESPACE=" + shown[0] + " and " + shown[1] + " are one namespace: " + WHY
                        + ", so git would write " + Printable.escape(ref, 200) + " of namespace " + shown[1]
                        + ", which fence guards as that namespace's. Push with GIT_NAMESPACE=" + shown[1]
                        + " instead, with its lease.";
            } else if (!policy.isFenced(ref)) {
                if (!foldsIntoFenced(ref, policy)) {
                    continue;
                }
                String[] shown = shown(ref, guarded);
                why = shown[0] + " is another spelling of "
                        + (guarded != null ? shown[1] + ", a fenced ref" : "a ref fenced by " + patternOf(ref, policy))
                        + ": " + WHY + ", so git would write that ref under a name fence does not guard. Push to "
                        + (guarded != null ? shown[1] + " itself" : "it under its fenced spelling")
                        + ", with its lease.";
            } else if (guarded != null) {
                String[] shown = shown(ref, guarded);
                why = shown[0] + " and " + shown[1] + (inPush ? ", both in this push," : "") + " are one ref: " + WHY
                        + ", so git keeps both spellings as one file"
                        + (inPush
                                ? ". Push it under one spelling."
                                : ", which fence guards as " + shown[1] + ". Push to " + shown[1]
                                        + " instead, with its lease.");
            } else if (folding.equals(ASCII) && !asciiComparable(ref)) {
                String[] shown = shown(ref, foldedWhereNotAscii(ref));
                why = shown[0] + " spells a name other than as its fold (characters other than ASCII in lower case"
                        + " and composed, none that macOS passes over, no dot that Windows strips): " + WHY
                        + ", and its hook compares ASCII letters only, so fence takes such names in that one form."
                        + " Push to " + shown[1] + " instead.";
            } else {
                continue;
            }
            lines.add(prefix + "REJECTED ref=" + ref + " reason=" + Reason.REF_CASE_ALIAS.code());
            lines.add(prefix + "fence: " + why);
        }
        return lines;
    }

    /** Why two spellings are one ref, for the sentences of {@link #refusals}. */
    private static final String WHY = "this repository's file system ignores case in ref names (core.ignorecase), and"
            + " on macOS Unicode normalisation and some invisible characters too, on Windows a dot that ends a"
            + " directory's name";

    /**
     * {@code a} and {@code b} as the pusher reads them: escaped as every name in fence's sentences, and where
     * that shows them alike (two Unicode normalisations of one name) with every character other than ASCII
     * as its code point, {@code cafe\\u0301}.
     */
    private static String[] shown(String a, String b) {
        String sa = Printable.escape(a, 200);
        String sb = b == null ? null : Printable.escape(b, 200);
        if (sb == null
                || !Normalizer.normalize(sa, Normalizer.Form.NFC)
                        .equals(Normalizer.normalize(sb, Normalizer.Form.NFC))) {
            return new String[] {sa, sb};
        }
        return new String[] {codePoints(sa), codePoints(sb)};
    }

    private static String codePoints(String s) {
        StringBuilder out = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                out.append(c);
            } else {
                String hex = Integer.toHexString(c);
                out.append("\\u").append("0000", hex.length(), 4).append(hex);
            }
        }
        return out.toString();
    }

    /**
     * True when {@code ref}'s fold is fenced, or it is the stored name of a git namespace's ref whose fold
     * is ({@code refs/NAMESPACES/t1/refs/heads/main} is {@code main} of namespace {@code t1} too).
     */
    static boolean foldsIntoFenced(String ref, FencePolicy policy) {
        if (policy.isFencedIgnoringCase(ref)) {
            return true;
        }
        String[] stored = GitNamespace.split(RefFolding.fold(ref));
        return !stored[0].isEmpty() && policy.isFencedIgnoringCase(stored[1]);
    }

    /** The first fenced pattern {@code ref}'s fold matches, quoted for a sentence. */
    private static String patternOf(String ref, FencePolicy policy) {
        String[] stored = GitNamespace.split(RefFolding.fold(ref));
        for (String p : policy.fencedRefs()) {
            String folded = RefFolding.fold(p);
            if (Globs.matches(folded, RefFolding.fold(ref))
                    || (!stored[0].isEmpty() && Globs.matches(folded, stored[1]))) {
                return Printable.escape(p, 200);
            }
        }
        return "fenced";
    }

    /**
     * {@code namespace} as {@code spellings} (namespaces) spell it otherwise: the namespace, or its first
     * components, as the repository spells them, with the rest of {@code namespace} after them; null when
     * none does. Of several, the one that spells the most components, then the first in sort order: the
     * hook and the shim find them in different orders (a directory's listing, a glob's), and both must be
     * told the same.
     */
    private static String otherSpelling(String namespace, List<String> spellings) {
        String best = null;
        int bestDepth = 0;
        for (String s : spellings) {
            String other = respell(namespace, s);
            if (other == null || other.equals(namespace)) {
                continue;
            }
            int depth = s.split("/", -1).length;
            if (best == null || depth > bestDepth || (depth == bestDepth && other.compareTo(best) < 0)) {
                best = other;
                bestDepth = depth;
            }
        }
        return best;
    }

    /**
     * The first of {@code spellings} that makes {@code ref} a fenced ref spelled otherwise: the spelling of
     * a leading part of it, with the rest of {@code ref} after it; null when there is none.
     */
    private static String fencedSpelling(String ref, List<String> spellings, FencePolicy policy) {
        if (spellings == null) {
            return null;
        }
        for (String s : spellings) {
            String other = respell(ref, s);
            if (other != null && !other.equals(ref) && policy.isFenced(other)) {
                return other;
            }
        }
        return null;
    }

    /**
     * {@code ref} with its first components spelled as {@code spelling}, whose components fold to theirs;
     * null when they do not (a fact that says nothing about {@code ref}).
     */
    static String respell(String ref, String spelling) {
        String[] r = ref.split("/", -1);
        String[] s = spelling.split("/", -1);
        if (s.length > r.length) {
            return null;
        }
        StringBuilder out = new StringBuilder(spelling);
        for (int i = 0; i < r.length; i++) {
            if (i < s.length) {
                if (!RefFolding.fold(r[i]).equals(RefFolding.fold(s[i]))) {
                    return null;
                }
            } else {
                out.append('/').append(r[i]);
            }
        }
        return out.toString();
    }

    /** True when each component of {@code ref} is ASCII with no dot at its end, or spelled as its own fold. */
    private static boolean asciiComparable(String ref) {
        return foldedWhereNotAscii(ref).equals(ref);
    }

    /**
     * {@code ref} with each component that holds a character other than ASCII, or ends with a dot, replaced
     * by its fold.
     */
    private static String foldedWhereNotAscii(String ref) {
        String[] parts = ref.split("/", -1);
        StringBuilder out = new StringBuilder(ref.length());
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            boolean kept = !p.endsWith(".");
            for (int j = 0; j < p.length() && kept; j++) {
                kept = p.charAt(j) < 0x80;
            }
            out.append(i == 0 ? "" : "/").append(kept ? p : RefFolding.fold(p));
        }
        return out.toString();
    }

    /**
     * For each of {@code pushed}, the spellings among {@code names} of a leading part of it (as many whole
     * components as fold alike) that differ from its own, each once. A name costs a lookup per component
     * its leading parts share with the pushed refs' folds, and a spelling that differs costs the pushed refs
     * it concerns once however many names share it (every ref of {@code packed-refs} in a directory spelled
     * otherwise), so a push of many refs against many names stays linear in them and in the facts found.
     * (No lambda on the hook's path: see {@link ProcessTable}.)
     */
    static Map<String, List<String>> aliases(List<String> pushed, List<String> names) {
        // Every leading part of every pushed ref, by its fold: the spellings the push has for it.
        Map<String, Set<String>> spelled = new HashMap<>();
        Map<String, List<String>> byFold = new HashMap<>();
        for (String ref : pushed) {
            String[] parts = ref.split("/", -1);
            StringBuilder fold = new StringBuilder();
            for (int k = 0; k < parts.length; k++) {
                fold.append(k == 0 ? "" : "/").append(RefFolding.fold(parts[k]));
                String key = fold.toString();
                Set<String> spellings = spelled.get(key);
                if (spellings == null) {
                    spellings = new HashSet<>(2);
                    spelled.put(key, spellings);
                    byFold.put(key, new ArrayList<>(1));
                }
                spellings.add(leading(ref, k + 1));
                byFold.get(key).add(ref);
            }
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        // Leading parts, by fold then spelling, already given to the pushed refs they concern.
        Set<String> given = new HashSet<>();
        for (String name : names) {
            String[] parts = name.split("/", -1);
            StringBuilder fold = new StringBuilder();
            String deepest = null;
            int depth = 0;
            for (int k = 0; k < parts.length; k++) {
                fold.append(k == 0 ? "" : "/").append(RefFolding.fold(parts[k]));
                String key = fold.toString();
                if (!spelled.containsKey(key)) {
                    break;
                }
                deepest = key;
                depth = k + 1;
            }
            if (deepest == null) {
                continue;
            }
            String mine = leading(name, depth);
            Set<String> theirs = spelled.get(deepest);
            if (theirs.size() == 1 && theirs.contains(mine)) {
                continue; // every pushed ref spells this part as the name does: the common case
            }
            if (!given.add(mine)) {
                continue; // another name with this leading part, as packed-refs lists a directory's refs
            }
            for (String ref : byFold.get(deepest)) {
                if (!leading(ref, depth).equals(mine)) {
                    List<String> found = out.get(ref);
                    if (found == null) {
                        found = new ArrayList<>(1);
                        out.put(ref, found);
                    }
                    found.add(mine);
                }
            }
        }
        return out;
    }

    /** The first {@code components} components of {@code name}. */
    private static String leading(String name, int components) {
        int at = -1;
        for (int i = 0; i < components; i++) {
            at = name.indexOf('/', at + 1);
            if (at < 0) {
                return name;
            }
        }
        return name.substring(0, at);
    }

    private static List<String> distinctRefs(List<RefUpdate> updates) {
        List<String> out = new ArrayList<>(updates.size());
        Set<String> seen = new HashSet<>();
        for (RefUpdate u : updates) {
            if (seen.add(u.ref())) {
                out.add(u.ref());
            }
        }
        return out;
    }

    /**
     * The loose refs' spellings along {@code parts} below {@code dir}: at each level the entries whose
     * folds are the pushed component's, followed down; each spelling where the path ends or no entry
     * matches goes into {@code out}. Listings are kept in {@code listings} by fold, so a push of many refs
     * lists each directory once and finds a component's spellings in it by one lookup, however many refs the
     * directory holds. An entry this JVM cannot name (a name outside the encoding of a hook run in a
     * C locale, where the file system respects case anyway) is passed over.
     */
    private static void loose(
            File dir,
            String spelledSoFar,
            String[] parts,
            int k,
            Map<String, Map<String, List<String>>> listings,
            List<String> out) {
        // The directory's entries by their folds.
        Map<String, List<String>> entries = listings.get(dir.getPath());
        if (entries == null) {
            String[] names = dir.list();
            entries = new HashMap<>();
            for (String name : names == null ? new String[0] : names) {
                String fold = RefFolding.fold(name);
                List<String> spellings = entries.get(fold);
                if (spellings == null) {
                    spellings = new ArrayList<>(1);
                    entries.put(fold, spellings);
                }
                spellings.add(name);
            }
            listings.put(dir.getPath(), entries);
        }
        List<String> matching = entries.get(RefFolding.fold(parts[k]));
        if (matching == null) {
            if (k > 0) {
                out.add(spelledSoFar);
            }
            return;
        }
        for (String e : matching) {
            String spelled = k == 0 ? e : spelledSoFar + "/" + e;
            File next = new File(dir, e);
            if (k + 1 < parts.length && next.isDirectory()) {
                loose(next, spelled, parts, k + 1, listings, out);
            } else {
                out.add(spelled);
            }
        }
    }

    /**
     * The names in {@code packed-refs} under {@code namespace} (without it) into {@code out}, and, when
     * {@code all} is not null, every name into {@code all} (where another spelling of the namespace is
     * looked for).
     */
    private static void packed(Path file, String namespace, List<String> out, List<String> all) {
        byte[] b;
        try {
            b = SmallFiles.readIfExists(file, Integer.MAX_VALUE - 8);
        } catch (IOException e) {
            return; // git cannot read it either, and refuses the push itself
        }
        if (b == null) {
            return;
        }
        String text = new String(b, StandardCharsets.UTF_8);
        int at = 0;
        while (at < text.length()) {
            int end = text.indexOf('\n', at);
            if (end < 0) {
                end = text.length();
            }
            char first = text.charAt(at);
            int space = text.indexOf(' ', at);
            if (first != '#' && first != '^' && space > at && space < end) {
                String name = text.substring(space + 1, end).strip();
                if (all != null) {
                    all.add(name);
                }
                if (name.startsWith(namespace)) {
                    out.add(name.substring(namespace.length()));
                }
            }
            at = end + 1;
        }
    }
}
