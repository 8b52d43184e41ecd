package dev.fence.core;

import java.text.Normalizer;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Validation of the names users give fence: resources, holders, repo ids and pushers.
 *
 * <p>A name is 1 to {@value #MAX_LENGTH} characters long and contains no control characters (so it
 * can never split a log line, a FENCED line or a ledger row), no invisible format characters (zero-width
 * spaces and joiners, bidirectional overrides, the soft hyphen) and no space but the ASCII one (so that
 * no name reads as another in a message, the ledger or the audit page), no unpaired surrogates (which no
 * store can write as themselves) and no whitespace at either end.
 *
 * <p>A holder named in a new grant ({@link #requireHolder}) is also one word of {@link Printable#isPlain
 * plain} characters: other agents read it inside fence's FENCED and busy messages, so it must not be able
 * to read as a sentence of fence's own, nor mix scripts the way look-alike names do (a Cyrillic 'а' in
 * an otherwise Latin name).
 */
public final class Names {
    /** Longest accepted name, in characters. */
    public static final int MAX_LENGTH = 512;

    private Names() {}

    /**
     * Returns {@code value} when it is a valid name.
     *
     * @param what what the name is, for the message ("resource", "holder")
     * @throws InvalidInputException naming the problem when it is not
     */
    public static String require(String what, String value) {
        if (value == null || value.isEmpty()) {
            throw new InvalidInputException(what + " must not be empty");
        }
        if (value.length() > MAX_LENGTH) {
            throw new InvalidInputException(
                    what + " is " + value.length() + " characters long; the limit is " + MAX_LENGTH);
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                throw new InvalidInputException(what + " contains a control character (U+"
                        + String.format("%04X", (int) c) + ") at position " + i);
            }
            int cp = value.codePointAt(i);
            int type = Character.getType(cp);
            if (type == Character.FORMAT
                    || (type == Character.SPACE_SEPARATOR && cp != ' ')
                    || Printable.isDefaultIgnorable(cp)) {
                throw new InvalidInputException(what + " contains an invisible character (U+"
                        + String.format("%04X", cp) + ") at position " + i
                        + ", which would make it read as another name");
            }
            // A lone surrogate (JSON's "\ud800") is no character: every store writes it as '?', so two
            // names that differ only there would be one lock and one ledger name.
            if (Character.isHighSurrogate(c)
                    && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new InvalidInputException(what + " contains an unpaired surrogate (U+"
                        + String.format("%04X", (int) c) + ") at position " + i + ", which is not a character");
            }
        }
        if (Character.isWhitespace(value.charAt(0)) || Character.isWhitespace(value.charAt(value.length() - 1))) {
            throw new InvalidInputException(what + " must not start or end with whitespace: '" + value + "'");
        }
        return value;
    }

    /**
     * Returns {@code holder} when it is a valid name ({@link #require}) that is also {@link
     * Printable#isPlain plain}: letters, digits, marks and {@code - _ . @ / : + = # ~ %}, no spaces; that
     * cannot read as another holder's name (letters of one script, as Unicode's compatibility form writes
     * them, no rare Latin letter, no combining mark left over on a Latin letter, no letter beside ASCII that
     * draws as punctuation, not only letters of another script that draw as ASCII ones); and of at most
     * {@link #MAX_HOLDER_LENGTH} characters. Asked of a holder that a new grant would record; a holder already
     * in a store is looked up by {@link #require} alone, so that a lease granted before these rules can still
     * be renewed and released.
     *
     * @throws InvalidInputException naming the problem when it is not
     */
    public static String requireHolder(String holder) {
        require("holder", holder);
        if (!Printable.isPlain(holder)) {
            for (int i = 0; i < holder.length(); ) {
                int cp = holder.codePointAt(i);
                if (!Printable.isPlainCharacter(cp)) {
                    throw new InvalidInputException("holder " + Printable.name(holder) + " contains '"
                            + Printable.escape(new String(Character.toChars(cp)), 16) + "' at position " + i
                            + ": a holder is one word of letters, digits and - _ . @ / : + = # ~ %");
                }
                i += Character.charCount(cp);
            }
        }
        if (holder.length() <= MAX_HOLDER_LENGTH && Printable.isAscii(holder)) {
            // Plain ASCII is one script, its own compatibility form, and carries no mark or look-alike:
            // the usual holder skips the Unicode tables the checks below load.
            return holder;
        }
        String mixed = mixedScripts(holder);
        if (mixed != null) {
            throw new InvalidInputException("holder " + Printable.name(holder) + " mixes " + mixed
                    + " letters, so it can read as another holder's name (a Cyrillic 'а' in a Latin name looks"
                    + " like the Latin 'a'): write a holder in one script");
        }
        if (holder.length() > MAX_HOLDER_LENGTH) {
            throw new InvalidInputException("holder is " + holder.length() + " characters long; a new holder has at"
                    + " most " + MAX_HOLDER_LENGTH + " (other agents read it in fence's messages, where a long"
                    + " name reads as a sentence)");
        }
        String composed = Normalizer.normalize(holder, Normalizer.Form.NFKC);
        if (!composed.equals(holder)) {
            throw new InvalidInputException("holder " + Printable.name(holder) + " has characters Unicode writes"
                    + " otherwise in its compatibility form (a mathematical or full-width letter, a ligature, a"
                    + " decomposed accent), so it can read as another holder's name: write it as "
                    + Printable.name(composed));
        }
        int base = -1;
        for (int i = 0; i < holder.length(); ) {
            int cp = holder.codePointAt(i);
            // In its composed form a Latin letter has taken every mark it can as one character: a mark
            // still left over (or one on a digit or a hyphen) draws over a name that reads as another's.
            if (isMark(cp) && (base < 0 || isLatinOrCommon(base))) {
                throw new InvalidInputException("holder " + Printable.name(holder) + " has a combining mark (U+"
                        + String.format("%04X", cp) + ") at position " + i + " that no Latin letter takes as"
                        + " one character, so it can draw as a stroke or a dot over another holder's name:"
                        + " write accented letters as one character");
            }
            if (!isMark(cp)) {
                base = cp;
            }
            if (isPunctuationLookAlike(cp) && besideAscii(holder, i, Character.charCount(cp))) {
                throw new InvalidInputException("holder " + Printable.name(holder) + " contains '"
                        + new String(Character.toChars(cp)) + "' (U+" + String.format("%04X", cp) + ") at position "
                        + i + ", a letter that draws as ASCII punctuation ('agentーb' reads as agent-b): write the"
                        + " punctuation itself");
            }
            if (isRareLatinLetter(cp)) {
                throw new InvalidInputException("holder " + Printable.name(holder) + " contains '"
                        + new String(Character.toChars(cp)) + "' (U+" + String.format("%04X", cp) + ") at position "
                        + i + ", a Latin letter outside the alphabets of everyday names that can pass for an ASCII"
                        + " one (IPA's 'ɡ' for 'g'): write it with ASCII or accented letters");
            }
            i += Character.charCount(cp);
        }
        String drawn = WholeScriptLookAlikes.drawnAsAscii(holder);
        if (drawn != null) {
            int first = 0;
            while (holder.charAt(first) < 0x80) {
                first++;
            }
            throw new InvalidInputException("holder " + Printable.name(holder) + " is written in "
                    + scriptName(Character.UnicodeScript.of(holder.charAt(first)))
                    + " letters that each draw as an ASCII one, so it reads as the holder '" + drawn
                    + "': choose a name with a letter of its own script, or bind holders to credentials"
                    + " ('fence serve --holder')");
        }
        return holder;
    }

    /**
     * Letters of Greek, Cyrillic, Armenian and Cherokee that Unicode's confusables table (UTS #39) maps to
     * one ASCII letter or digit, and what each draws as. A name of one of these scripts whose every letter
     * is here is a whole-script look-alike of an ASCII name ('орѕ' in Cyrillic reads as 'ops'): the
     * one-script rule lets it through, and the table is small enough to carry. {@code FROM} lists the
     * letters script by script; {@code TO} holds, at the same index, the ASCII each draws as.
     */
    static final class WholeScriptLookAlikes {
        static final String FROM =
                // Greek
                "\u037F\u0391\u0392\u0395\u0396\u0397\u0399\u039A\u039C\u039D\u039F\u03A1\u03A4\u03A5\u03A7"
                        + "\u03B1\u03B3\u03B9\u03BD\u03BF\u03C1\u03C3\u03C5\u03DC\u03F1\u03F2\u03F3\u03F9\u03FA"
                        // Cyrillic
                        + "\u0405\u0406\u0408\u0410\u0412\u0415\u0417\u041A\u041C\u041D\u041E\u0420\u0421\u0422"
                        + "\u0423\u0425\u042C\u0430\u0431\u0433\u0435\u043E\u0440\u0441\u0443\u0445\u0455\u0456"
                        + "\u0458\u0461\u0474\u0475\u04AE\u04AF\u04BB\u04BD\u04C0\u04CF\u0501\u050C\u051B\u051C"
                        + "\u051D"
                        // Armenian
                        + "\u054D\u054F\u0555\u0561\u0563\u0566\u0570\u0578\u057C\u057D\u0581\u0584\u0585"
                        // Cherokee
                        + "\u13A0\u13A1\u13A2\u13A5\u13A9\u13AA\u13AB\u13AC\u13B3\u13B7\u13BB\u13BD\u13C0\u13C2"
                        + "\u13C3\u13CF\u13D2\u13D4\u13D5\u13D9\u13DA\u13DE\u13DF\u13E2\u13E6\u13E7\u13F3\u13F4";
        static final String TO = "JABEZHIKMNOPTYXayivopouFpcjCM"
                + "SIJABE3KMHOPCTYXba6reopcyxsijwVvYyhelidGqWw"
                + "USOwqqhnnugfo"
                + "DRTiYAJEWMHYGhZbRWSVSLCPKdGB";

        /**
         * The ASCII name {@code name} draws as when it has a character beyond ASCII and each such character
         * is in {@link #FROM}; else null.
         */
        static String drawnAsAscii(String name) {
            StringBuilder out = new StringBuilder(name.length());
            boolean beyondAscii = false;
            for (int i = 0; i < name.length(); i++) {
                char c = name.charAt(i);
                if (c < 0x80) {
                    out.append(c);
                    continue;
                }
                int at = FROM.indexOf(c);
                if (at < 0) {
                    return null;
                }
                out.append(TO.charAt(at));
                beyondAscii = true;
            }
            return beyondAscii ? out.toString() : null;
        }
    }

    /**
     * True for a letter beyond ASCII of no script of its own (Unicode's Common script: modifier letters
     * such as 'ː' and 'ˍ', the Japanese length mark 'ー') or a CJK letter that draws as a stroke or a dash
     * ('一', '丨', 'ㅡ', 'ㅣ', 'ㄧ'): beside ASCII they read as the punctuation holder names use (between
     * kana, 'ー' is a Japanese name's own).
     */
    private static boolean isPunctuationLookAlike(int cp) {
        if (cp < 0x80 || !Character.isLetter(cp)) {
            return false;
        }
        Character.UnicodeScript script = Character.UnicodeScript.of(cp);
        return script == Character.UnicodeScript.COMMON
                || script == Character.UnicodeScript.INHERITED
                || cp == 0x4E00
                || cp == 0x4E28
                || cp == 0x4E36
                || cp == 0x4E3F
                || cp == 0x3161
                || cp == 0x3163
                || cp == 0x3127
                || cp == 0x30FC
                || cp == 0x3007;
    }

    /** True when the character at {@code i} ({@code n} chars long) has an ASCII character on either side. */
    private static boolean besideAscii(String s, int i, int n) {
        return (i > 0 && s.charAt(i - 1) < 0x80) || (i + n < s.length() && s.charAt(i + n) < 0x80);
    }

    private static boolean isLatinOrCommon(int cp) {
        Character.UnicodeScript script = Character.UnicodeScript.of(cp);
        return script == Character.UnicodeScript.LATIN || script == Character.UnicodeScript.COMMON;
    }

    private static boolean isMark(int cp) {
        int type = Character.getType(cp);
        return type == Character.NON_SPACING_MARK
                || type == Character.COMBINING_SPACING_MARK
                || type == Character.ENCLOSING_MARK;
    }

    /** Longest holder a new grant may name; a holder already in a store keeps {@link #MAX_LENGTH}. */
    public static final int MAX_HOLDER_LENGTH = 64;

    /**
     * True for a Latin letter beyond Latin-1 and Latin Extended-A that is not an ASCII letter with
     * diacritics (Vietnamese 'ệ' is one; IPA's 'ɡ', small capitals and the letters of Latin Extended-B
     * without an ASCII base are not): such letters draw as ASCII ones in most fonts, and everyday names
     * do without them. Unicode's confusable tables (UTS #39) say more, in data too large for a jar that
     * every push opens; this covers the Latin look-alikes that pass the one-script rule.
     */
    private static boolean isRareLatinLetter(int cp) {
        if (cp < 0x180 || !Character.isLetter(cp) || Character.UnicodeScript.of(cp) != Character.UnicodeScript.LATIN) {
            return false;
        }
        String base = Normalizer.normalize(new String(Character.toChars(cp)), Normalizer.Form.NFD);
        char first = base.charAt(0);
        return base.length() == 1 || first >= 0x80 || !Character.isLetter(first);
    }

    /**
     * Scripts a name may mix, after Unicode's "highly restrictive" profile (UTS #39): Japanese, Chinese and
     * Korean names mix their own scripts with Han and Latin; any other name is of one script.
     */
    private static final class MixesAllowed {
        // A holder class: Character.UnicodeScript's initialiser builds tables of every script, and a hook
        // that checks ASCII names (the usual push) must not pay for them. Bench: "Java hook" rows.
        static final List<Set<Character.UnicodeScript>> ALL = List.of(
                EnumSet.of(
                        Character.UnicodeScript.LATIN,
                        Character.UnicodeScript.HAN,
                        Character.UnicodeScript.HIRAGANA,
                        Character.UnicodeScript.KATAKANA),
                EnumSet.of(
                        Character.UnicodeScript.LATIN, Character.UnicodeScript.HAN, Character.UnicodeScript.BOPOMOFO),
                EnumSet.of(Character.UnicodeScript.LATIN, Character.UnicodeScript.HAN, Character.UnicodeScript.HANGUL));
    }

    /** The scripts {@code name}'s letters mix, joined by " and ", when no allowed mix covers them; else null. */
    static String mixedScripts(String name) {
        Set<Character.UnicodeScript> scripts = EnumSet.noneOf(Character.UnicodeScript.class);
        for (int i = 0; i < name.length(); ) {
            int cp = name.codePointAt(i);
            i += Character.charCount(cp);
            Character.UnicodeScript script = Character.UnicodeScript.of(cp);
            if (script != Character.UnicodeScript.COMMON && script != Character.UnicodeScript.INHERITED) {
                scripts.add(script);
            }
        }
        if (scripts.size() <= 1) {
            return null;
        }
        for (Set<Character.UnicodeScript> allowed : MixesAllowed.ALL) {
            if (allowed.containsAll(scripts)) {
                return null;
            }
        }
        StringBuilder out = new StringBuilder();
        for (Character.UnicodeScript script : scripts) {
            out.append(out.length() == 0 ? "" : " and ").append(scriptName(script));
        }
        return out.toString();
    }

    /** "Cyrillic" for {@code CYRILLIC}: a script as a message names it. */
    private static String scriptName(Character.UnicodeScript script) {
        return script.name().charAt(0) + script.name().substring(1).toLowerCase(java.util.Locale.ROOT);
    }
}
