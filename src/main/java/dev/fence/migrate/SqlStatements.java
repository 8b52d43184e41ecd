package dev.fence.migrate;

import dev.fence.core.InvalidInputException;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a migration file into statements at each {@code ;} outside quotes, comments and (PostgreSQL)
 * dollar quotes, remembering the line each starts on so that an error names it, and says what a statement
 * starts with once its comments are gone.
 *
 * <p>Every check fence makes of a migration before it runs (transaction control, fence's own names) is
 * only as good as this reading, so it follows the engine's own lexer, and where the engine and its driver
 * differ, the one that sees less inside quotes: a {@code ;} fence took for quoted text that the driver
 * sent on as a second statement would run unchecked.
 *
 * <ul>
 *   <li>PostgreSQL: {@code '…'} ({@code ''} inside), {@code E'…'} with backslash escapes where the driver
 *       sees one (after whitespace, {@code "} or an operator character, never at a statement's start);
 *       standard strings are taken as {@code standard_conforming_strings} has them by default (a backslash
 *       is a character), and a migration may not change it; {@code "…"}, {@code --} comments ending at a
 *       {@code \n} or a {@code \r}, nested {@code /* *}{@code /} comments, and dollar
 *       quotes {@code $$…$$}, {@code $tag$…$tag$}; a {@code $} right after an identifier character
 *       (a letter, digit, {@code _}, {@code $} or any non-ASCII character) continues the identifier and
 *       opens no quote (PostgreSQL's {@code x$a$} is one identifier; the driver counts a digit too).
 *   <li>MariaDB/MySQL, with the server's default {@code sql_mode}: {@code '…'} and {@code "…"} with
 *       backslash escapes, {@code `…`}, {@code #} comments, {@code --} comments only before a space or
 *       control character, {@code /* *}{@code /} comments, except {@code /*!…*}{@code /} and {@code
 *       /*M!…*}{@code /}, whose text the server runs and fence reads as code. No dollar quotes.
 *   <li>SQLite: {@code '…'}, {@code "…"}, {@code `…`}, {@code […]}, {@code --} and {@code /* *}{@code /}
 *       comments. No dollar quotes.
 * </ul>
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
     * @param code its text as the engine runs it: each comment a space (the text of MariaDB's {@code /*!…*}
     *     {@code /} kept), quotes as written
     */
    public record Statement(int line, String sql, String code) {}

    /**
     * The statements of {@code text}, in order, as the engine {@code kind} reads them; a last statement
     * may omit its {@code ;}.
     *
     * @throws InvalidInputException for a quote, comment or dollar quote left open, naming its line
     */
    public static List<Statement> split(String text, DatabaseUrl.Kind kind) {
        List<Statement> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        StringBuilder code = new StringBuilder();
        boolean executable = false; // inside MariaDB's /*! … */, whose text is code
        int line = 1;
        int start = -1;
        int i = 0;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            int end = -1;
            boolean comment = false;
            if (lineComment(text, i, kind)) {
                end = lineCommentEnd(text, i, kind);
                comment = true;
            } else if (c == '/' && i + 1 < n && text.charAt(i + 1) == '*') {
                int opened = kind == DatabaseUrl.Kind.MARIADB ? executableComment(text, i) : -1;
                if (opened > 0) {
                    line += count(text, i, opened);
                    current.append(text, i, opened);
                    code.append(' ');
                    executable = true;
                    i = opened;
                    continue;
                }
                end = blockCommentEnd(text, i, kind == DatabaseUrl.Kind.POSTGRESQL);
                if (end < 0) {
                    throw new InvalidInputException("line " + line + ": a /* comment is never closed");
                }
                comment = true;
            } else if (executable && c == '*' && i + 1 < n && text.charAt(i + 1) == '/') {
                current.append("*/");
                code.append(' ');
                executable = false;
                i += 2;
                continue;
            } else if (opensQuote(c, kind)) {
                end = quoteEnd(text, i, kind, current);
                if (end < 0) {
                    throw new InvalidInputException("line " + line + ": a " + c + " quote is never closed");
                }
            } else if (c == '$' && kind == DatabaseUrl.Kind.POSTGRESQL) {
                String tag = dollarTag(text, i);
                if (tag != null) {
                    int close = text.indexOf(tag, i + tag.length());
                    if (close < 0) {
                        throw new InvalidInputException("line " + line + ": a " + tag + " quote is never closed");
                    }
                    end = close + tag.length();
                }
            }
            if (end >= 0) {
                if (comment) {
                    code.append(' ');
                } else {
                    start = start < 0 ? line : start;
                    code.append(text, i, end);
                }
                line += count(text, i, end);
                current.append(text, i, end);
                i = end;
                continue;
            }
            if (c == ';') {
                if (start >= 0) {
                    out.add(new Statement(
                            start, current.toString().strip(), code.toString().strip()));
                }
                current.setLength(0);
                code.setLength(0);
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
            code.append(c);
            i++;
        }
        if (start >= 0) {
            out.add(new Statement(
                    start, current.toString().strip(), code.toString().strip()));
        }
        return out;
    }

    /**
     * Whether {@code statement} starts or ends a transaction or a savepoint:
     * {@code BEGIN}, {@code COMMIT}, {@code END}, {@code ROLLBACK}, {@code ABORT}, {@code START TRANSACTION},
     * {@code SAVEPOINT}, {@code RELEASE}, {@code PREPARE TRANSACTION}, MySQL's {@code XA …} and {@code SET
     * autocommit}. Such a statement in a migration would end the transaction that holds fence's claim, so that
     * what follows runs unfenced (and a failure rolls nothing back). The leading keyword is matched
     * case-insensitively in the statement's {@link Statement#code() code}, after comments and whitespace.
     *
     * @return the statement's leading words as written, upper-cased (for the message), or null when it is
     *     not transaction control
     */
    public static String transactionControl(Statement statement) {
        List<String> words = leadingWords(statement.code(), 3);
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

    /**
     * Whether {@code statement} is SQLite's {@code ATTACH} or {@code DETACH}, which open (or close) another
     * database file on fence's connection. The connection refuses them anyway (it may attach no database);
     * this names them before anything runs. Matched like {@link #transactionControl}: the leading keyword of
     * the statement's {@link Statement#code() code}; other engines have no such statement.
     *
     * @return {@code ATTACH} or {@code DETACH}, or null
     */
    public static String attach(Statement statement, DatabaseUrl.Kind kind) {
        if (kind != DatabaseUrl.Kind.SQLITE) {
            return null;
        }
        List<String> words = leadingWords(statement.code(), 1);
        String first = words.isEmpty() ? "" : words.get(0);
        return first.equals("ATTACH") || first.equals("DETACH") ? first : null;
    }

    /**
     * The names of fence migrate's own bookkeeping: its tables ({@code fence_tokens}, the fence row;
     * {@code schema_migrations}, who applied what) and MariaDB's named-lock functions (the lock that makes
     * runners of one resource take turns runs on the migration's own connection).
     */
    static final java.util.Set<String> OWN_NAMES =
            java.util.Set.of("fence_tokens", "schema_migrations", "get_lock", "release_lock", "release_all_locks");

    /**
     * The first of {@link #OWN_NAMES} that {@code statement} names, lower-cased, or null. A migration that
     * changed them would undo the fence it runs under (lower the fence row, tie the database to another
     * resource, rewrite who applied a version, release the runners' lock). Matched as a whole word of
     * {@code [A-Za-z0-9_]} in any case, anywhere in the statement's text, comments and quoted text included:
     * a function body is quoted text, and a comment to fence may be code to the server. PostgreSQL's
     * Unicode-escaped names and strings ({@code U&"fence\005Ftokens"}, with or without {@code UESCAPE}) are
     * read decoded as well. A name the statement builds as it runs (dynamic SQL) is not seen here; the
     * runner compares fence's tables before and after each migration for that.
     */
    public static String ownName(Statement statement) {
        return firstName(screened(statement), OWN_NAMES);
    }

    /**
     * PostgreSQL's settings that change how quotes are read: {@code standard_conforming_strings} (off, a
     * backslash in {@code '…'} escapes the next character) and {@code backslash_quote} (whether {@code \'}
     * may stand for a quote).
     */
    static final java.util.Set<String> QUOTING_SETTINGS =
            java.util.Set.of("standard_conforming_strings", "backslash_quote");

    /**
     * The first of {@link #QUOTING_SETTINGS} that {@code statement} names on PostgreSQL, lower-cased, or null
     * (and null on other engines). fence splits and screens a migration reading quotes as they are when
     * {@code standard_conforming_strings} is on; a migration that turned it off ({@code SET}, {@code SET
     * LOCAL}, {@code set_config(…)}, {@code ALTER DATABASE|ROLE … SET}, {@code RESET}) would have the driver
     * split its later statements where fence saw none, and run what fence never screened (a {@code COMMIT}
     * that ends the transaction holding the claim). Matched as {@link #ownName} matches, anywhere in the
     * statement; a name built while the statement runs is not seen (the runner checks the setting after
     * each statement too).
     */
    public static String quotingSetting(Statement statement, DatabaseUrl.Kind kind) {
        return kind == DatabaseUrl.Kind.POSTGRESQL ? firstName(screened(statement), QUOTING_SETTINGS) : null;
    }

    /**
     * What the name screens read: the statement as written, then each {@code U&"…"} and {@code U&'…'} in it
     * decoded, once with PostgreSQL's default escape character {@code \} and once with each character a
     * {@code UESCAPE '…'} in the statement names. Read in every engine's text and wherever it appears, quotes
     * and comments included, as the screens read names: a decoding too many can only refuse a migration
     * that spells a name of fence's this way, never admit one.
     */
    static String screened(Statement statement) {
        String sql = statement.sql();
        int n = sql.length();
        List<Character> escapes = new ArrayList<>(List.of('\\'));
        String upper = sql.toUpperCase(java.util.Locale.ROOT);
        for (int at = upper.indexOf("UESCAPE"); at >= 0; at = upper.indexOf("UESCAPE", at + 1)) {
            int q = at + "UESCAPE".length();
            while (q < n && Character.isWhitespace(sql.charAt(q))) {
                q++;
            }
            if (q + 2 < n && sql.charAt(q) == '\'' && sql.charAt(q + 2) == '\'') {
                escapes.add(sql.charAt(q + 1));
            }
        }
        StringBuilder out = null;
        for (int i = 0; i + 2 < n; i++) {
            char u = sql.charAt(i);
            char quote = sql.charAt(i + 2);
            if ((u != 'U' && u != 'u') || sql.charAt(i + 1) != '&' || (quote != '"' && quote != '\'')) {
                continue;
            }
            // PostgreSQL reads the quote as a standard one (a doubled quote is one; a backslash is a character).
            int end = quoteEnd(sql, i + 2, DatabaseUrl.Kind.POSTGRESQL, "");
            String body = sql.substring(i + 3, end < 0 ? n : end - 1).replace("" + quote + quote, "" + quote);
            out = out == null ? new StringBuilder(sql) : out;
            for (char escape : escapes) {
                out.append(' ').append(unicodeUnescaped(body, escape));
            }
            i = end < 0 ? n : end - 1;
        }
        return out == null ? sql : out.toString();
    }

    /**
     * {@code body} with PostgreSQL's Unicode escapes decoded: {@code <e>XXXX}, {@code <e>+XXXXXX} and {@code
     * <e><e>} for escape character {@code e}; an escape that is not one is kept as written.
     */
    private static String unicodeUnescaped(CharSequence body, char escape) {
        StringBuilder out = new StringBuilder(body.length());
        int n = body.length();
        for (int i = 0; i < n; i++) {
            char c = body.charAt(i);
            if (c != escape || i + 1 >= n) {
                out.append(c);
                continue;
            }
            if (body.charAt(i + 1) == escape) {
                out.append(escape);
                i++;
                continue;
            }
            boolean plus = body.charAt(i + 1) == '+';
            int from = plus ? i + 2 : i + 1;
            int digits = plus ? 6 : 4;
            int codePoint = hex(body, from, digits);
            if (codePoint < 0 || !Character.isValidCodePoint(codePoint)) {
                out.append(c);
                continue;
            }
            out.appendCodePoint(codePoint);
            i = from + digits - 1;
        }
        return out.toString();
    }

    /** The {@code digits} hex digits at {@code from} as a number, or -1 when they are not all there. */
    private static int hex(CharSequence s, int from, int digits) {
        if (from + digits > s.length()) {
            return -1;
        }
        int v = 0;
        for (int k = from; k < from + digits; k++) {
            int d = Character.digit(s.charAt(k), 16);
            if (d < 0) {
                return -1;
            }
            v = v * 16 + d;
        }
        return v;
    }

    /** The first whole word of {@code sql} ({@code [A-Za-z0-9_]}, any case) in {@code names}, lower-cased. */
    private static String firstName(String sql, java.util.Set<String> names) {
        int i = 0;
        int n = sql.length();
        while (i < n) {
            if (!wordChar(sql.charAt(i))) {
                i++;
                continue;
            }
            int j = i;
            while (j < n && wordChar(sql.charAt(j))) {
                j++;
            }
            String w = sql.substring(i, j).toLowerCase(java.util.Locale.ROOT);
            if (names.contains(w)) {
                return w;
            }
            i = j;
        }
        return null;
    }

    /** ASCII only: a $ or a non-ASCII letter next to a name is taken as the name's end, never its middle. */
    private static boolean wordChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }

    /** Up to {@code max} words ({@code [A-Za-z_]+}, upper-cased; {@code @@} and {@code session.} skipped). */
    private static List<String> leadingWords(String code, int max) {
        List<String> words = new ArrayList<>();
        int i = 0;
        int n = code.length();
        while (i < n && words.size() < max) {
            char c = code.charAt(i);
            if (Character.isWhitespace(c) || c == '@' || c == '.') {
                i++;
            } else if (Character.isLetter(c) || c == '_') {
                int j = i;
                while (j < n && (Character.isLetter(code.charAt(j)) || code.charAt(j) == '_')) {
                    j++;
                }
                String w = code.substring(i, j).toUpperCase(java.util.Locale.ROOT);
                if (!(w.equals("SESSION") && j < n && code.charAt(j) == '.')) {
                    words.add(w);
                }
                i = j;
            } else {
                break;
            }
        }
        return words;
    }

    /** Where a comment running to the end of the line starts: {@code --} (MariaDB: before a space), {@code #}. */
    private static boolean lineComment(String text, int i, DatabaseUrl.Kind kind) {
        char c = text.charAt(i);
        if (kind == DatabaseUrl.Kind.MARIADB) {
            if (c == '#') {
                return true;
            }
            // MariaDB: "--" opens a comment only before whitespace or a control character; 1--1 is 1 - -1.
            return c == '-'
                    && text.startsWith("--", i)
                    && (i + 2 >= text.length()
                            || text.charAt(i + 2) <= ' '
                            || Character.isWhitespace(text.charAt(i + 2)));
        }
        return c == '-' && text.startsWith("--", i);
    }

    /**
     * MariaDB's executable comment at {@code i} ({@code /*!}, {@code /*M!}, with an optional version):
     * the index its code starts at, or -1 for a plain comment.
     */
    private static int executableComment(String text, int i) {
        int j = i + 2;
        if (j < text.length() && text.charAt(j) == 'M') {
            j++;
        }
        if (j >= text.length() || text.charAt(j) != '!') {
            return -1;
        }
        j++;
        while (j < text.length() && text.charAt(j) >= '0' && text.charAt(j) <= '9') {
            j++;
        }
        return j;
    }

    /** The index just past the block comment at {@code i}, or -1 when it is never closed. */
    private static int blockCommentEnd(String text, int i, boolean nested) {
        int depth = 0;
        int j = i;
        while (j + 1 < text.length()) {
            if (text.charAt(j) == '/' && text.charAt(j + 1) == '*') {
                depth = nested || depth == 0 ? depth + 1 : depth;
                j += 2;
            } else if (text.charAt(j) == '*' && text.charAt(j + 1) == '/') {
                depth--;
                j += 2;
                if (depth == 0) {
                    return j;
                }
            } else {
                j++;
            }
        }
        return -1;
    }

    private static boolean opensQuote(char c, DatabaseUrl.Kind kind) {
        return switch (c) {
            case '\'', '"' -> true;
            case '`' -> kind != DatabaseUrl.Kind.POSTGRESQL; // an operator character to PostgreSQL
            case '[' -> kind == DatabaseUrl.Kind.SQLITE;
            default -> false;
        };
    }

    /**
     * Where the line comment at {@code i} ends: at the line's end, which is a {@code \n}, and on PostgreSQL a
     * {@code \r} too (the server's lexer and its driver both end a comment there: a {@code ;} after a lone
     * {@code \r} ends a statement).
     */
    private static int lineCommentEnd(String text, int i, DatabaseUrl.Kind kind) {
        int j = i;
        while (j < text.length()
                && text.charAt(j) != '\n'
                && !(kind == DatabaseUrl.Kind.POSTGRESQL && text.charAt(j) == '\r')) {
            j++;
        }
        return j;
    }

    /**
     * The index just past the quote opened at {@code i}, or -1 when it is never closed; {@code statement} is
     * the text of the statement so far, before the quote.
     */
    private static int quoteEnd(String text, int i, DatabaseUrl.Kind kind, CharSequence statement) {
        char open = text.charAt(i);
        char close = open == '[' ? ']' : open;
        boolean backslash = (kind == DatabaseUrl.Kind.MARIADB && open != '`')
                || (kind == DatabaseUrl.Kind.POSTGRESQL && open == '\'' && escapeString(text, i, statement));
        int j = i + 1;
        while (j < text.length()) {
            char c = text.charAt(j);
            if (backslash && c == '\\') {
                j += 2;
            } else if (c == close && open != '[' && j + 1 < text.length() && text.charAt(j + 1) == close) {
                j += 2; // a doubled quote is one quote character
            } else if (c == close) {
                return j + 1;
            } else {
                j++;
            }
        }
        return -1;
    }

    /**
     * PostgreSQL's E'…', as its driver tells one (the one of the two that sees less inside quotes: the
     * server takes any {@code E'} that does not continue a name for one): an E or e before the quote, with a
     * character of the statement before that E which ends a name to the driver (whitespace, {@code "} or an
     * operator character). An E that starts the statement, the driver sends as the start of its text, and
     * reads the quote after it as a standard string.
     */
    private static boolean escapeString(String text, int quote, CharSequence statement) {
        if (quote < 2 || (text.charAt(quote - 1) != 'E' && text.charAt(quote - 1) != 'e')) {
            return false;
        }
        if (statement.toString().strip().length() < 2) {
            return false; // the E is the statement's first character
        }
        char before = text.charAt(quote - 2);
        return before == '"' || " \t\n\r\f".indexOf(before) >= 0 || ",()[].;:+-*/%^<>=~!@#&|`?".indexOf(before) >= 0;
    }

    /** PostgreSQL's (and its driver's) identifier continuation: after one, a $ opens no dollar quote. */
    private static boolean identifierChar(char c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || c == '_'
                || c == '$'
                || c > 127;
    }

    /**
     * The dollar-quote tag starting at {@code i} ({@code $$} or {@code $name$}), or null: none after an
     * identifier character ({@code x$a$} is an identifier), none whose name starts with a digit ({@code $1}
     * is a parameter). Tag characters are PostgreSQL's: ASCII letters, digits, {@code _}, non-ASCII.
     */
    private static String dollarTag(String text, int i) {
        if (i > 0 && identifierChar(text.charAt(i - 1))) {
            return null;
        }
        int j = i + 1;
        while (j < text.length() && text.charAt(j) != '$' && identifierChar(text.charAt(j))) {
            j++;
        }
        if (j < text.length() && text.charAt(j) == '$') {
            if (j > i + 1 && text.charAt(i + 1) >= '0' && text.charAt(i + 1) <= '9') {
                return null;
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
