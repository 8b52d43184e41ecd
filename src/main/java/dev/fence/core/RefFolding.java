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
 * then composed (NFC). Two names with equal folds are one name to every such file system; the fold errs
 * towards calling names equal, never the other way. Names of ASCII characters only, nearly all of them,
 * are folded without the normaliser. {@code /} folds to itself, so the fold of a name is the folds of its
 * components joined by {@code /}.
 *
 * <p>Stateless and thread-safe.
 */
public final class RefFolding {
    private RefFolding() {}

    /** {@code name} folded as described above. */
    public static String fold(String name) {
        boolean ascii = true;
        boolean upper = false;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c >= 0x80) {
                ascii = false;
                break;
            }
            upper |= c >= 'A' && c <= 'Z';
        }
        if (ascii) {
            return upper ? lowerAscii(name) : name;
        }
        String d = Normalizer.normalize(name, Normalizer.Form.NFD);
        StringBuilder out = new StringBuilder(d.length());
        for (int i = 0; i < d.length(); ) {
            int cp = d.codePointAt(i);
            out.appendCodePoint(Character.toLowerCase(Character.toUpperCase(cp)));
            i += Character.charCount(cp);
        }
        return Normalizer.normalize(out, Normalizer.Form.NFC);
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
