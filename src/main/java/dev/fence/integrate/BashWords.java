package dev.fence.integrate;

import java.util.ArrayList;
import java.util.List;

/**
 * A Bash command line cut into its simple commands (at {@code ;}, {@code &}, {@code |}, newlines,
 * parentheses, backquotes and {@code $(}), each as its words with quotes and backslashes removed. Enough to
 * find a {@code git push} written out in the line; not a shell: expansions, aliases and functions are not
 * followed.
 */
final class BashWords {
    private BashWords() {}

    static List<List<String>> commands(String line) {
        List<List<String>> out = new ArrayList<>();
        List<String> words = new ArrayList<>();
        StringBuilder word = null;
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote == '\'') {
                if (c == '\'') {
                    quote = 0;
                } else {
                    word.append(c);
                }
                continue;
            }
            if (c == '\\' && i + 1 < line.length()) {
                char next = line.charAt(++i);
                if (next != '\n') {
                    word = word == null ? new StringBuilder() : word;
                    word.append(next);
                }
                continue;
            }
            if (quote == '"') {
                if (c == '"') {
                    quote = 0;
                } else if (c == '`' || (c == '$' && i + 1 < line.length() && line.charAt(i + 1) == '(')) {
                    // A command substitution inside double quotes runs a command of its own.
                    word = flush(words, word);
                    flushCommand(out, words);
                    words = new ArrayList<>();
                    quote = 0;
                } else {
                    word.append(c);
                }
                continue;
            }
            if (c == '\'' || c == '"') {
                quote = c;
                word = word == null ? new StringBuilder() : word;
            } else if (c == ' ' || c == '\t') {
                word = flush(words, word);
            } else if (c == ';'
                    || c == '&'
                    || c == '|'
                    || c == '\n'
                    || c == '('
                    || c == ')'
                    || c == '`'
                    || c == '{' && word == null
                    || c == '}' && word == null) {
                word = flush(words, word);
                flushCommand(out, words);
                words = new ArrayList<>();
            } else if (c == '$' && i + 1 < line.length() && line.charAt(i + 1) == '(') {
                word = flush(words, word);
                flushCommand(out, words);
                words = new ArrayList<>();
                i++;
            } else {
                word = word == null ? new StringBuilder() : word;
                word.append(c);
            }
        }
        flush(words, word);
        flushCommand(out, words);
        return out;
    }

    private static StringBuilder flush(List<String> words, StringBuilder word) {
        if (word != null) {
            words.add(word.toString());
        }
        return null;
    }

    private static void flushCommand(List<List<String>> out, List<String> words) {
        if (!words.isEmpty()) {
            out.add(List.copyOf(words));
        }
    }
}
