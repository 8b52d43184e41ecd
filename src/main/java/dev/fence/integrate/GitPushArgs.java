package dev.fence.integrate;

import java.util.ArrayList;
import java.util.List;

/**
 * The words after {@code git push} read the way git reads them, so the Bash guard judges the push git
 * would make and not a guess at it.
 *
 * <p>git's option parser ({@code parse-options.c}) has no Java counterpart, so its rules are written out
 * here against {@code git push}'s option table ({@code builtin/push.c}, git 2.39; {@code --branches}, an
 * alias of {@code --all} in later releases, is read as {@code --all}):
 *
 * <ul>
 *   <li>Options and arguments may be mixed; {@code --} or {@code --end-of-options} ends the options, and
 *       a lone {@code -} is an argument.
 *   <li>Short options without a value may be bundled ({@code -fn}); an option that takes a value
 *       ({@code -o}) takes the rest of the word ({@code -ofence=1}) or, when the word ends with it, the
 *       next word. A bundle of three or more letters that starts a long name or {@code no-} ({@code
 *       -force}) is refused as a typo.
 *   <li>A long option is named in full, negated with {@code no-} ({@code --no-dry-run}; an option whose
 *       name starts with {@code no-} is negated by leaving it off), or by any prefix that names one option
 *       only, negated or not ({@code --dry}, {@code --no-dry}); {@code --n}, {@code --no} and {@code
 *       --no-} name every negatable option and are ambiguous. A value follows {@code =} or, for an option
 *       that requires one, is the next word; {@code --force-with-lease} and {@code --signed} take one only
 *       after {@code =}.
 *   <li>Options are applied in order, so a later one undoes an earlier one ({@code --dry-run --no-dry-run}
 *       pushes; {@code --no-mirror} also clears the force {@code --mirror} set, as git clears both bits).
 * </ul>
 *
 * <p>Whatever git would refuse to parse (an unknown, ambiguous or misused option) is {@link Unjudged}: git
 * would not push, but the guard does not guess at a line it cannot read as git does.
 */
final class GitPushArgs {
    private GitPushArgs() {}

    /** How git reads one option's value. */
    private enum Arg {
        /** None: {@code --opt=x} is an error. */
        NONE,
        /** Required: after {@code =}, the rest of a short bundle, or the next word. */
        REQUIRED,
        /** Optional, only after {@code =}. */
        OPTIONAL
    }

    /** What an option does to the push, as far as the guard cares. */
    private enum Effect {
        OTHER,
        ALL,
        MIRROR,
        DRY_RUN,
        FORCE,
        TAGS,
        FORCE_WITH_LEASE
    }

    private record Option(char shortName, String longName, Arg arg, Effect effect) {}

    private static final char NO_SHORT = 0;

    /** git push's options, in git's order (which only orders the names in an ambiguity message). */
    private static final List<Option> OPTIONS = List.of(
            new Option('v', "verbose", Arg.NONE, Effect.OTHER),
            new Option('q', "quiet", Arg.NONE, Effect.OTHER),
            new Option(NO_SHORT, "repo", Arg.REQUIRED, Effect.OTHER),
            new Option(NO_SHORT, "all", Arg.NONE, Effect.ALL),
            new Option(NO_SHORT, "branches", Arg.NONE, Effect.ALL),
            new Option(NO_SHORT, "mirror", Arg.NONE, Effect.MIRROR),
            new Option('d', "delete", Arg.NONE, Effect.OTHER),
            new Option(NO_SHORT, "tags", Arg.NONE, Effect.TAGS),
            new Option('n', "dry-run", Arg.NONE, Effect.DRY_RUN),
            new Option(NO_SHORT, "porcelain", Arg.NONE, Effect.OTHER),
            new Option('f', "force", Arg.NONE, Effect.FORCE),
            new Option(NO_SHORT, "force-with-lease", Arg.OPTIONAL, Effect.FORCE_WITH_LEASE),
            new Option(NO_SHORT, "force-if-includes", Arg.NONE, Effect.OTHER),
            new Option(NO_SHORT, "recurse-submodules", Arg.REQUIRED, Effect.OTHER),
            new Option(NO_SHORT, "thin", Arg.NONE, Effect.OTHER),
            new Option(NO_SHORT, "receive-pack", Arg.REQUIRED, Effect.OTHER),
            new Option(NO_SHORT, "exec", Arg.REQUIRED, Effect.OTHER),
            new Option('u', "set-upstream", Arg.NONE, Effect.OTHER),
            new Option(NO_SHORT, "progress", Arg.NONE, Effect.OTHER),
            new Option(NO_SHORT, "prune", Arg.NONE, Effect.OTHER),
            new Option(NO_SHORT, "no-verify", Arg.NONE, Effect.OTHER),
            new Option(NO_SHORT, "follow-tags", Arg.NONE, Effect.OTHER),
            new Option(NO_SHORT, "signed", Arg.OPTIONAL, Effect.OTHER),
            new Option(NO_SHORT, "atomic", Arg.NONE, Effect.OTHER),
            new Option('o', "push-option", Arg.REQUIRED, Effect.OTHER),
            new Option('4', "ipv4", Arg.NONE, Effect.OTHER),
            new Option('6', "ipv6", Arg.NONE, Effect.OTHER));

    /** How git reads the words after {@code push}. */
    sealed interface Reading permits Push, Help, Unjudged {}

    /**
     * A push git would start.
     *
     * @param dryRun {@code -n} is in effect: nothing is updated
     * @param force {@code -f} (or {@code --mirror}) is in effect
     * @param allBranches {@code --all} or {@code --mirror}: every branch
     * @param tags {@code --tags}
     * @param leaseTracking a {@code --force-with-lease} without an expected SHA is in effect
     * @param leaseExplicit a {@code --force-with-lease=<ref>:<expect>} is in effect
     * @param arguments the repository and the refspecs, as git is left with them
     */
    record Push(
            boolean dryRun,
            boolean force,
            boolean allBranches,
            boolean tags,
            boolean leaseTracking,
            boolean leaseExplicit,
            List<String> arguments)
            implements Reading {}

    /** git prints its usage and pushes nothing. */
    record Help() implements Reading {}

    /** git would refuse the line; {@code why} says which word, in git's terms. */
    record Unjudged(String why) implements Reading {}

    /** Reads {@code words}, the words after {@code push}, as git push does. */
    static Reading read(List<String> words) {
        return new Reader(words).read();
    }

    private static final class Reader {
        private final List<String> words;
        private int i;
        private boolean all;
        private boolean mirror;
        private boolean dryRun;
        private boolean force;
        private boolean tags;
        private boolean leaseTracking;
        private boolean leaseExplicit;
        private final List<String> arguments = new ArrayList<>();

        Reader(List<String> words) {
            this.words = words;
        }

        Reading read() {
            for (i = 0; i < words.size(); i++) {
                String w = words.get(i);
                if (!w.startsWith("-") || w.equals("-")) {
                    arguments.add(w);
                    continue;
                }
                if (w.equals("--") || w.equals("--end-of-options")) {
                    arguments.addAll(words.subList(i + 1, words.size()));
                    break;
                }
                if (w.equals("--help") || w.equals("--help-all") || w.equals("-h")) {
                    return new Help();
                }
                String why = w.startsWith("--") ? longOption(w.substring(2)) : shortOptions(w.substring(1));
                if (why != null) {
                    return new Unjudged(why);
                }
            }
            return new Push(dryRun, force, all || mirror, tags, leaseTracking, leaseExplicit, List.copyOf(arguments));
        }

        /** Applies one short bundle ({@code body} is the word without its dash); null, or why git refuses it. */
        private String shortOptions(String body) {
            for (int at = 0; at < body.length(); at++) {
                char c = body.charAt(at);
                Option o = OPTIONS.stream()
                        .filter(x -> x.shortName() == c)
                        .findFirst()
                        .orElse(null);
                if (o == null) {
                    return "unknown switch '" + c + "' in '-" + body + "'";
                }
                String rest = body.substring(at + 1);
                if (o.arg() == Arg.NONE) {
                    apply(o, false, null);
                } else {
                    // A short option with a value takes the rest of the word, else the next word.
                    String value = rest.isEmpty() ? nextWord() : rest;
                    if (value == null) {
                        return "switch '" + c + "' requires a value";
                    }
                    apply(o, false, value);
                    return null;
                }
                if (at == 0 && !rest.isEmpty() && looksLikeLongOption(body)) {
                    return "'-" + body + "' looks like a long option with one dash (did you mean '--" + body + "'?)";
                }
            }
            return null;
        }

        /** git's check_typos: a bundle of three or more letters that begins {@code no-} or a long name. */
        private static boolean looksLikeLongOption(String body) {
            return body.length() >= 3
                    && (body.startsWith("no-")
                            || OPTIONS.stream().anyMatch(o -> o.longName().startsWith(body)));
        }

        /** Applies one long option ({@code arg} is the word without its dashes); null, or why git refuses it. */
        private String longOption(String arg) {
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            String inlineValue = eq < 0 ? null : arg.substring(eq + 1);
            Option abbreviated = null;
            boolean abbreviatedUnset = false;
            // git keeps the text after '=' for an abbreviation unless the word itself was negated.
            String abbreviatedValue = null;
            Option ambiguous = null;
            boolean ambiguousUnset = false;
            for (Option o : OPTIONS) {
                String longName = o.longName();
                // Whether the table's own name is a negation ("no-verify" read as "verify", unset).
                boolean nameUnset = false;
                while (true) {
                    String rest = arg.startsWith(longName) ? arg.substring(longName.length()) : null;
                    boolean argUnset = false;
                    boolean abbreviation = false;
                    if (rest == null) {
                        if (longName.startsWith(name)) {
                            abbreviation = true;
                        } else if ("no-".startsWith(arg)) {
                            // --n, --no, --no-: every negatable option at once.
                            argUnset = true;
                            abbreviation = true;
                        } else if (!arg.startsWith("no-")) {
                            if (longName.startsWith("no-")) {
                                longName = longName.substring(3);
                                nameUnset = true;
                                continue;
                            }
                            break;
                        } else {
                            argUnset = true;
                            String negated = arg.substring(3);
                            if (negated.startsWith(longName)) {
                                rest = negated.substring(longName.length());
                            } else if (longName.startsWith(negated)) {
                                abbreviation = true;
                            } else {
                                break;
                            }
                        }
                    }
                    if (abbreviation) {
                        if (abbreviated != null && !aliases(abbreviated, o)) {
                            ambiguous = abbreviated;
                            ambiguousUnset = abbreviatedUnset;
                        }
                        abbreviated = o;
                        abbreviatedUnset = argUnset ^ nameUnset;
                        if (!argUnset) {
                            abbreviatedValue = inlineValue;
                        }
                        break;
                    }
                    if (!rest.isEmpty() && rest.charAt(0) != '=') {
                        break;
                    }
                    return value(o, argUnset ^ nameUnset, rest.isEmpty() ? null : rest.substring(1), arg);
                }
            }
            if (ambiguous != null) {
                return "ambiguous option '--" + arg + "' (could be --" + (ambiguousUnset ? "no-" : "")
                        + ambiguous.longName() + " or --" + (abbreviatedUnset ? "no-" : "") + abbreviated.longName()
                        + ")";
            }
            if (abbreviated != null) {
                return value(abbreviated, abbreviatedUnset, abbreviatedValue, arg);
            }
            return "unknown option '--" + arg + "'";
        }

        /** git's get_value for a long option; null, or why git refuses it. */
        private String value(Option o, boolean unset, String inlineValue, String arg) {
            if (unset) {
                if (inlineValue != null) {
                    return "option '--" + arg + "': --no-" + o.longName() + " takes no value";
                }
                apply(o, true, null);
                return null;
            }
            switch (o.arg()) {
                case NONE -> {
                    if (inlineValue != null) {
                        return "option '--" + arg + "': --" + o.longName() + " takes no value";
                    }
                    apply(o, false, null);
                }
                case OPTIONAL -> apply(o, false, inlineValue);
                case REQUIRED -> {
                    String value = inlineValue != null ? inlineValue : nextWord();
                    if (value == null) {
                        return "option '--" + arg + "': --" + o.longName() + " requires a value";
                    }
                    apply(o, false, value);
                }
            }
            return null;
        }

        /** The word after the current one, taken as a value, or null at the end. */
        private String nextWord() {
            if (i + 1 >= words.size()) {
                return null;
            }
            return words.get(++i);
        }

        private void apply(Option o, boolean unset, String value) {
            switch (o.effect()) {
                case ALL -> all = !unset;
                case MIRROR -> {
                    // One bit pair in git: --mirror sets mirror and force, --no-mirror clears both.
                    mirror = !unset;
                    force = !unset;
                }
                case DRY_RUN -> dryRun = !unset;
                case FORCE -> force = !unset;
                case TAGS -> tags = !unset;
                case FORCE_WITH_LEASE -> {
                    if (unset) {
                        leaseTracking = false;
                        leaseExplicit = false;
                    } else if (value == null || value.indexOf(':') <= 0 || value.endsWith(":")) {
                        // Bare, or <ref> alone: the remote-tracking ref's value, whatever that is now.
                        leaseTracking = true;
                    } else {
                        leaseExplicit = true;
                    }
                }
                case OTHER -> {}
            }
        }

        private static boolean aliases(Option a, Option b) {
            return a.effect() == Effect.ALL && b.effect() == Effect.ALL;
        }
    }
}
