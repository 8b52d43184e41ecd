package dev.fence.migrate;

import dev.fence.core.InvalidInputException;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a migration file into statements at each {@code ;} outside quotes ({@code '…'}, {@code "…"},
 * {@code `…`}), comments ({@code --}, {@code /* *}{@code /}) and PostgreSQL dollar quotes ({@code $$…$$},
 * {@code $tag$…$tag$}), remembering the line each starts on so that an error names it.
 *
 * <p>Not {@link dev.fence.store.SqlScripts}: that reads fence's own SQL, where a statement ends with {@code
 * ;} at the end of a line; a migration is anyone's SQL, whose function bodies end lines with {@code ;} too,
 * and whose errors must name a line.
 */
public final class SqlStatements {
    private SqlStatements() {}

    /**
     * One statement.
     *
     * @param line the 1-based line of the file it starts on
     * @param sql its text, without the closing {@code ;}
     */
    public record Statement(int line, String sql) {}

    /**
     * The statements of {@code text}, in order; a last statement may omit its {@code ;}.
     *
     * @throws InvalidInputException for a quote, comment or dollar quote left open, naming its line
     */
    public static List<Statement> split(String text) {
        List<Statement> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        int line = 1;
        int start = -1;
        int i = 0;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            if (c == '-' && i + 1 < n && text.charAt(i + 1) == '-') {
                int end = text.indexOf('\n', i);
                end = end < 0 ? n : end;
                current.append(text, i, end);
                i = end;
                continue;
            }
            if (c == '/' && i + 1 < n && text.charAt(i + 1) == '*') {
                int end = text.indexOf("*/", i + 2);
                if (end < 0) {
                    throw new InvalidInputException("line " + line + ": a /* comment is never closed");
                }
                line += count(text, i, end + 2);
                current.append(text, i, end + 2);
                i = end + 2;
                continue;
            }
            if (c == '\'' || c == '"' || c == '`') {
                int end = text.indexOf(c, i + 1);
                if (end < 0) {
                    throw new InvalidInputException("line " + line + ": a " + c + " quote is never closed");
                }
                start = start < 0 ? line : start;
                line += count(text, i, end + 1);
                current.append(text, i, end + 1);
                i = end + 1;
                continue;
            }
            if (c == '$') {
                String tag = dollarTag(text, i);
                if (tag != null) {
                    int end = text.indexOf(tag, i + tag.length());
                    if (end < 0) {
                        throw new InvalidInputException("line " + line + ": a " + tag + " quote is never closed");
                    }
                    start = start < 0 ? line : start;
                    line += count(text, i, end + tag.length());
                    current.append(text, i, end + tag.length());
                    i = end + tag.length();
                    continue;
                }
            }
            if (c == ';') {
                if (start >= 0) {
                    out.add(new Statement(start, current.toString().strip()));
                }
                current.setLength(0);
                start = -1;
                i++;
                continue;
            }
            if (c == '\n') {
                line++;
            } else if (!Character.isWhitespace(c) && start < 0) {
                start = line;
            }
            current.append(c);
            i++;
        }
        if (start >= 0) {
            out.add(new Statement(start, current.toString().strip()));
        }
        return out;
    }

    /**
     * Whether {@code sql} (one statement of {@link #split}) starts or ends a transaction or a savepoint:
     * {@code BEGIN}, {@code COMMIT}, {@code END}, {@code ROLLBACK}, {@code ABORT}, {@code START TRANSACTION},
     * {@code SAVEPOINT}, {@code RELEASE}, {@code PREPARE TRANSACTION}, MySQL's {@code XA …} and {@code SET
     * autocommit}. Such a statement in a migration would end the transaction that holds fence's claim, so that
     * what follows runs unfenced (and a failure rolls nothing back). The leading keyword is matched
     * case-insensitively after comments and whitespace.
     *
     * @return the statement's leading words as written, upper-cased (for the message), or null when it is
     *     not transaction control
     */
    public static String transactionControl(String sql) {
        List<String> words = leadingWords(sql, 3);
        if (words.isEmpty()) {
            return null;
        }
        String first = words.get(0);
        String second = words.size() > 1 ? words.get(1) : "";
        switch (first) {
            case "BEGIN", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE", "XA":
                return first;
            case "START", "PREPARE":
                return second.equals("TRANSACTION") ? first + " " + second : null;
            case "SET":
                // MySQL: SET autocommit = 1 commits; SET [SESSION|GLOBAL|@@[session.]]autocommit.
                for (String w : words.subList(1, words.size())) {
                    if (w.equals("AUTOCOMMIT")) {
                        return "SET AUTOCOMMIT";
                    }
                    if (!w.equals("SESSION") && !w.equals("LOCAL") && !w.equals("GLOBAL")) {
                        break;
                    }
                }
                return null;
            default:
                return null;
        }
    }

    /** Up to {@code max} words ({@code [A-Za-z_]+}, upper-cased; {@code @@} and {@code session.} skipped). */
    private static List<String> leadingWords(String sql, int max) {
        List<String> words = new ArrayList<>();
        int i = 0;
        int n = sql.length();
        while (i < n && words.size() < max) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c) || c == '@' || c == '.') {
                i++;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                int end = sql.indexOf('\n', i);
                i = end < 0 ? n : end;
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
            } else if (Character.isLetter(c) || c == '_') {
                int j = i;
                while (j < n && (Character.isLetter(sql.charAt(j)) || sql.charAt(j) == '_')) {
                    j++;
                }
                String w = sql.substring(i, j).toUpperCase(java.util.Locale.ROOT);
                if (!(w.equals("SESSION") && j < n && sql.charAt(j) == '.')) {
                    words.add(w);
                }
                i = j;
            } else {
                break;
            }
        }
        return words;
    }

    /** The dollar-quote tag starting at {@code i} ({@code $$} or {@code $name$}), or null. */
    private static String dollarTag(String text, int i) {
        int j = i + 1;
        while (j < text.length() && (Character.isLetterOrDigit(text.charAt(j)) || text.charAt(j) == '_')) {
            j++;
        }
        if (j < text.length() && text.charAt(j) == '$') {
            if (j > i + 1 && Character.isDigit(text.charAt(i + 1))) {
                return null; // $1 is a parameter, not a tag
            }
            return text.substring(i, j + 1);
        }
        return null;
    }

    private static int count(String text, int from, int to) {
        int lines = 0;
        for (int k = from; k < to; k++) {
            if (text.charAt(k) == '\n') {
                lines++;
            }
        }
        return lines;
    }
}
