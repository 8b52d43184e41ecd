package dev.fence.server;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An {@code application/x-www-form-urlencoded} body or a query string: names to values, in order,
 * repeats kept ({@code curl --data-urlencode 'env=GL_ID=user-1' --data-urlencode 'env=…'}).
 */
final class Form {
    private final Map<String, List<String>> values;

    private Form(Map<String, List<String>> values) {
        this.values = values;
    }

    static Form empty() {
        return new Form(Map.of());
    }

    /**
     * Parses {@code name=value&…}; {@code +} is a space, {@code %XX} a byte, and the bytes must be UTF-8.
     * {@code text} holds one char per byte (decoded as ISO-8859-1), as bodies and raw query strings do.
     *
     * @throws HttpError 400 for a malformed escape or invalid UTF-8
     */
    static Form parse(String text) {
        return parse(text, "form body", true);
    }

    /** As {@link #parse(String)}, for a raw query string: messages name the query. */
    static Form parseQuery(String text) {
        return parse(text, "query", false);
    }

    /**
     * @param bytes {@code text} holds one char per byte (a body read as ISO-8859-1), so every value is
     *     decoded from its bytes as UTF-8, also one with no escape at all: a client that sends UTF-8 text
     *     unescaped (the curl shim's /dev/tcp transport does, for a ref or pusher name) must not have it
     *     read as Latin-1. A query string comes from Jetty already decoded to characters.
     */
    private static Form parse(String text, String what, boolean bytes) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (text == null || text.isEmpty()) {
            return new Form(out);
        }
        int start = 0;
        while (start <= text.length()) {
            int amp = text.indexOf('&', start);
            int end = amp < 0 ? text.length() : amp;
            if (end > start) {
                String pair = text.substring(start, end);
                int eq = pair.indexOf('=');
                String name = decode(eq < 0 ? pair : pair.substring(0, eq), what, bytes);
                String value = eq < 0 ? "" : decode(pair.substring(eq + 1), what, bytes);
                out.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
            }
            if (amp < 0) {
                break;
            }
            start = amp + 1;
        }
        return new Form(out);
    }

    /** Every value of {@code name}, in order; empty when absent. */
    List<String> all(String name) {
        return values.getOrDefault(name, List.of());
    }

    /**
     * The one value of {@code name}, or null.
     *
     * @throws HttpError 400 when it is given more than once
     */
    String get(String name) {
        List<String> v = all(name);
        if (v.size() > 1) {
            throw HttpError.badRequest("'" + name + "' is given " + v.size() + " times; give it once");
        }
        return v.isEmpty() ? null : v.get(0);
    }

    /** The names present, in first-seen order. */
    java.util.Set<String> names() {
        return values.keySet();
    }

    private static String decode(String s, String what, boolean bytes) {
        if (s.indexOf('%') < 0 && s.indexOf('+') < 0 && (!bytes || isAscii(s))) {
            return s;
        }
        byte[] out = new byte[s.length()];
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '+') {
                out[n++] = ' ';
            } else if (c == '%') {
                if (i + 2 >= s.length()) {
                    throw HttpError.badRequest("malformed " + what + ": '%' must be followed by two hex digits");
                }
                int hi = Character.digit(s.charAt(i + 1), 16);
                int lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw HttpError.badRequest("malformed " + what + ": '%' must be followed by two hex digits");
                }
                out[n++] = (byte) (hi * 16 + lo);
                i += 2;
            } else if (c < 0x100) {
                out[n++] = (byte) c;
            } else {
                throw HttpError.badRequest("malformed " + what + ": unescaped non-ASCII text; percent-encode it");
            }
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(out, 0, n))
                    .toString();
        } catch (CharacterCodingException e) {
            throw HttpError.badRequest("malformed " + what + ": a value is not valid UTF-8");
        }
    }

    private static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }
}
