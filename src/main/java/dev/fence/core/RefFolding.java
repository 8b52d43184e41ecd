package dev.fence.core;

import java.text.Normalizer;

/**
 * Ref names as a file system that ignores case compares them: macOS (APFS and HFS+, which also ignore
 * Unicode normalisation: {@code café} composed and decomposed is one name) and Windows. On such a system
 * git's files backend stores {@code refs/heads/MAIN}, {@code refs/HEADS/main} and {@code refs/heads/main}
 * as one file, so the names are one ref whatever git and fence call them.
 *
 * <p>The fold is canonical caseless matching as Unicode defines it, with the simple case mappings: the
 * name decomposed (NFD), each character mapped to the lower case of its upper case (the mapping {@link
 * String#equalsIgnoreCase} uses: the Kelvin sign {@code K} folds to {@code k}, the long {@code ſ} to {@code s}),
 * then composed (NFC). Two more spellings name one file and fold alike:
 *
 * <ul>
 *   <li>HFS+ passes over the code points its technote calls ignorable (U+200C to U+200F, U+202A to U+202E,
 *       U+206A to U+206F and U+FEFF, the list git's {@code is_hfs_dotgit} skips), so {@code ma}, one of
 *       them, {@code in} is {@code main} there: the fold drops them.
 *   <li>Windows strips the dots that end a path component, so {@code refs/heads./main} is {@code
 *       refs/heads/main} there: the fold drops them from each component that holds anything else (git
 *       allows one such dot in a component other than the last, and no trailing space at all).
 * </ul>
 *
 * <p>Two names with equal folds are one name to some such file system; the fold errs towards calling names
 * equal, never the other way. Names of ASCII characters only with no component ending in a dot, nearly all
 * of them, are folded without the normaliser. {@code /} folds to itself, so the fold of a name is the folds
 * of its components joined by {@code /}.
 *
 * <p>Stateless and thread-safe.
 */
public final class RefFolding {
    private RefFolding() {}

    /** {@code name} folded as described above. */
    public static String fold(String name) {
        boolean ascii = true;
        boolean upper = false;
        boolean dot = false;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c >= 0x80) {
                ascii = false;
                break;
            }
            upper |= c >= 'A' && c <= 'Z';
            dot |= c == '.' && (i + 1 == name.length() || name.charAt(i + 1) == '/');
        }
        if (ascii) {
            String lower = upper ? lowerAscii(name) : name;
            return dot ? withoutTrailingDots(lower) : lower;
        }
        StringBuilder kept = new StringBuilder(name.length());
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!ignorable(c)) {
                kept.append(c);
            }
        }
        String d = Normalizer.normalize(kept, Normalizer.Form.NFD);
        StringBuilder out = new StringBuilder(d.length());
        for (int i = 0; i < d.length(); ) {
            int cp = d.codePointAt(i);
            out.appendCodePoint(Character.toLowerCase(Character.toUpperCase(cp)));
            i += Character.charCount(cp);
        }
        return withoutTrailingDots(Normalizer.normalize(out, Normalizer.Form.NFC));
    }

    /** True for a code point HFS+ passes over in a name (all of them are in the Basic Multilingual Plane). */
    static boolean ignorable(char c) {
        return (c >= 0x200c && c <= 0x200f)
                || (c >= 0x202a && c <= 0x202e)
                || (c >= 0x206a && c <= 0x206f)
                || c == 0xfeff;
    }

    /**
     * {@code name} with the dots that end each component removed, where the component holds something else
     * (a component of dots only is left as it is: Windows keeps {@code ...} as a name).
     */
    private static String withoutTrailingDots(String name) {
        StringBuilder out = new StringBuilder(name.length());
        int start = 0;
        while (true) {
            int slash = name.indexOf('/', start);
            int end = slash < 0 ? name.length() : slash;
            int cut = end;
            while (cut > start && name.charAt(cut - 1) == '.') {
                cut--;
            }
            out.append(name, start, cut == start ? end : cut);
            if (slash < 0) {
                return out.toString();
            }
            out.append('/');
            start = slash + 1;
        }
    }

    private static String lowerAscii(String name) {
        char[] out = name.toCharArray();
        for (int i = 0; i < out.length; i++) {
            if (out[i] >= 'A' && out[i] <= 'Z') {
                out[i] += 'a' - 'A';
            }
        }
        return new String(out);
    }
}
