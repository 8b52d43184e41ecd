package dev.fence.hook;

import dev.fence.core.InvalidInputException;
import dev.fence.core.Printable;
import dev.fence.core.RefNames;
import dev.fence.core.RefUpdate;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a pre-receive hook's standard input: one {@code <old-id> SP <new-id> SP <ref> LF} line per ref
 * update, as git, GitLab, GHES and Gitea all send it.
 *
 * <p>The parser is strict, because a hook that guesses could admit a push it should have fenced:
 *
 * <ul>
 *   <li>ids are lower-case hex, 40 digits (SHA-1) or 64 (SHA-256), and both ids on a line have the same
 *       length; the all-zero id stands for "no ref" (old for a create, new for a delete), but not on
 *       both sides of one line;
 *   <li>the ref is valid UTF-8, passes {@link RefNames#check} and has no C1 control or line separator
 *       either; a ref appears at most once;
 *   <li>no empty lines; a final line without its LF is accepted;
 *   <li>a line is at most {@link #DEFAULT_MAX_LINE_BYTES} bytes (without the LF) and the input at most
 *       {@link #DEFAULT_MAX_LINES} lines, unless the constructor says otherwise.
 * </ul>
 *
 * <p>Any violation throws {@link InvalidInputException} naming the 1-based line number and the problem;
 * input text in the message is escaped ({@code \x07}), never raw, because it is shown to the pusher.
 * Empty input gives an empty list.
 *
 * <p>Input is read in blocks and scanned byte by byte, so a push of 10,000 refs costs a few
 * milliseconds. Instances hold only their limits and are thread-safe; {@link #parse} keeps its state on
 * the stack.
 */
public final class HookInputParser {
    /** Default longest line, in bytes without the LF: room for two SHA-256 ids and a long ref name. */
    public static final int DEFAULT_MAX_LINE_BYTES = 4096;

    /** Default most lines (ref updates) in one push. */
    public static final int DEFAULT_MAX_LINES = 1_000_000;

    private static final int DISPLAY_LIMIT = 120;

    /** The read block's bounds: sized by what the stream says it has, within them. */
    private static final int MIN_BLOCK = 8 * 1024;

    private static final int MAX_BLOCK = 64 * 1024;

    /** Two SHA-1 ids and a ref of 150 bytes fit; longer lines grow it, up to the line limit. */
    private static final int FIRST_LINE_BUFFER = 256;

    private final int maxLineBytes;
    private final int maxLines;

    /** A parser with the default limits. */
    public HookInputParser() {
        this(DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_LINES);
    }

    /**
     * A parser with the given limits.
     *
     * @param maxLineBytes longest accepted line in bytes, not counting its LF; at least 1
     * @param maxLines most accepted lines; at least 1
     */
    public HookInputParser(int maxLineBytes, int maxLines) {
        if (maxLineBytes < 1 || maxLines < 1) {
            throw new IllegalArgumentException("limits must be positive: " + maxLineBytes + ", " + maxLines);
        }
        this.maxLineBytes = maxLineBytes;
        this.maxLines = maxLines;
    }

    /**
     * Reads {@code in} to its end and returns the ref updates in input order. Does not close {@code in}.
     *
     * @throws InvalidInputException when a line is malformed or a limit is exceeded
     * @throws UncheckedIOException when reading fails
     */
    public List<RefUpdate> parse(InputStream in) {
        State state = new State();
        byte[] line = new byte[Math.min(maxLineBytes, FIRST_LINE_BUFFER)];
        int length = 0;
        try {
            // fence serve parses a few hundred bytes per request from memory, whose size the stream knows
            // (an 8 KB block each was a sixth of what a verdict allocated); a hook, a pipe from git, which
            // says only what it holds so far.
            int known = in.available() + 1;
            int size = in instanceof ByteArrayInputStream ? known : Math.max(MIN_BLOCK, known);
            byte[] block = new byte[Math.min(MAX_BLOCK, size)];
            int n;
            while ((n = in.read(block)) != -1) {
                for (int i = 0; i < n; i++) {
                    byte b = block[i];
                    if (b == '\n') {
                        state.accept(line, length);
                        length = 0;
                    } else if (length == maxLineBytes) {
                        throw new InvalidInputException("hook input line " + (state.lineNo + 1) + " is longer than "
                                + maxLineBytes + " bytes; expected '<old-id> <new-id> <ref>'");
                    } else {
                        if (length == line.length) {
                            line = Arrays.copyOf(line, Math.min(maxLineBytes, line.length * 2));
                        }
                        line[length++] = b;
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not read the hook input", e);
        }
        if (length > 0) {
            state.accept(line, length);
        }
        return state.updates;
    }

    /** What one call of {@link #parse} has seen so far. */
    private final class State {
        final List<RefUpdate> updates = new ArrayList<>();
        final Map<String, Integer> lineOfRef = new HashMap<>();
        final CharsetDecoder utf8 = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        int lineNo;

        void accept(byte[] line, int length) {
            lineNo++;
            if (lineNo > maxLines) {
                throw new InvalidInputException("hook input has more than " + maxLines + " lines");
            }
            if (length == 0) {
                throw fail("is empty; expected '<old-id> <new-id> <ref>'");
            }
            int sp1 = indexOf(line, 0, length, (byte) ' ');
            int sp2 = sp1 < 0 ? -1 : indexOf(line, sp1 + 1, length, (byte) ' ');
            if (sp2 < 0) {
                throw fail("expected '<old-id> <new-id> <ref>' separated by single spaces; got '"
                        + display(line, 0, length) + "'");
            }
            String oldId = objectId("old id", line, 0, sp1);
            String newId = objectId("new id", line, sp1 + 1, sp2);
            if (oldId.length() != newId.length()) {
                throw fail("old id has " + oldId.length() + " digits but new id has " + newId.length()
                        + "; both must be SHA-1 (40) or both SHA-256 (64)");
            }
            if (isZero(line, 0, sp1) && isZero(line, sp1 + 1, sp2)) {
                throw fail("old and new id are both zero");
            }
            String ref = ref(line, sp2 + 1, length);
            Integer earlier = lineOfRef.putIfAbsent(ref, lineNo);
            if (earlier != null) {
                throw fail("ref '" + Printable.escape(ref, DISPLAY_LIMIT) + "' was already updated on line " + earlier);
            }
            updates.add(new RefUpdate(oldId, newId, ref));
        }

        private String objectId(String what, byte[] line, int from, int to) {
            int len = to - from;
            if (len != 40 && len != 64) {
                throw fail(what + " '" + display(line, from, to) + "' is " + len
                        + " characters long; expected 40 (SHA-1) or 64 (SHA-256) hex digits");
            }
            for (int i = from; i < to; i++) {
                byte b = line[i];
                if (!((b >= '0' && b <= '9') || (b >= 'a' && b <= 'f'))) {
                    throw fail(what + " '" + display(line, from, to) + "' is not lower-case hex (character "
                            + (i - from + 1) + ")");
                }
            }
            return new String(line, from, len, StandardCharsets.US_ASCII);
        }

        private String ref(byte[] line, int from, int to) {
            String ref;
            try {
                ref = utf8.reset()
                        .decode(ByteBuffer.wrap(line, from, to - from))
                        .toString();
            } catch (CharacterCodingException e) {
                throw fail("ref '" + display(line, from, to) + "' is not valid UTF-8");
            }
            for (int i = 0; i < ref.length(); i++) {
                char c = ref.charAt(i);
                // RefNames stops at C0 controls; C1 controls (U+0080..U+009F, e.g. CSI) and line separators
                // can drive a terminal or split a line just as well, and Names would refuse them later.
                if ((c >= 0x80 && c <= 0x9f) || c == '\u2028' || c == '\u2029') {
                    throw fail("ref '" + Printable.escape(ref, DISPLAY_LIMIT) + "': ref name contains a control"
                            + " character (U+" + String.format("%04X", (int) c) + ") at position " + i);
                }
            }
            try {
                RefNames.check(ref);
            } catch (InvalidInputException e) {
                // RefNames may quote the raw name; escape the whole message so nothing raw reaches the pusher.
                throw fail("ref '" + Printable.escape(ref, DISPLAY_LIMIT) + "': "
                        + Printable.escape(e.getMessage(), 2 * DISPLAY_LIMIT));
            }
            return ref;
        }

        private InvalidInputException fail(String problem) {
            return new InvalidInputException("hook input line " + lineNo + ": " + problem);
        }
    }

    private static int indexOf(byte[] line, int from, int to, byte b) {
        for (int i = from; i < to; i++) {
            if (line[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static boolean isZero(byte[] line, int from, int to) {
        for (int i = from; i < to; i++) {
            if (line[i] != '0') {
                return false;
            }
        }
        return true;
    }

    /** Lenient decode (bad bytes become U+FFFD) plus escaping, for messages only. */
    private static String display(byte[] line, int from, int to) {
        CharBuffer chars = StandardCharsets.UTF_8.decode(ByteBuffer.wrap(line, from, to - from));
        return Printable.escape(chars.toString(), DISPLAY_LIMIT);
    }
}
