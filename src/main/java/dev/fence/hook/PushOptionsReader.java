package dev.fence.hook;

import dev.fence.core.InvalidInputException;
import dev.fence.core.Printable;
import dev.fence.core.Proofs;
import dev.fence.core.PushOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Reads the push options a hook receives in {@code GIT_PUSH_OPTION_COUNT} and {@code
 * GIT_PUSH_OPTION_0 … GIT_PUSH_OPTION_<count-1>}.
 *
 * <p>{@code GIT_PUSH_OPTION_COUNT} unset means no options: plain git leaves it unset when the client did
 * not negotiate push options, and GitLab leaves it unset when the client sent none. Otherwise it must be
 * a decimal count no larger than {@value #MAX_OPTIONS}, and every numbered variable below it must be
 * set.
 *
 * <p>fence reads two options and ignores every other one (GitLab's {@code ci.skip}, {@code
 * merge_request.*}, …):
 *
 * <ul>
 *   <li>{@code fence=<token>}: at most once; the token is written in plain decimal digits, without sign,
 *       spaces or leading zeros, and lies in 1 … {@link Long#MAX_VALUE};
 *   <li>{@code fence-proof=<proof>}: at most once, only together with {@code fence=}, and {@link
 *       Proofs#isWellFormed well-formed}. Whether it is <em>valid</em> is for the admission rule to
 *       decide.
 * </ul>
 *
 * <p>Every violation throws {@link InvalidInputException} naming the option. A token value is quoted
 * (escaped) in the message; a proof value never is, since it is a credential.
 *
 * <p>Stateless and thread-safe.
 */
public final class PushOptionsReader {
    /** The most push options fence accepts in one push. */
    public static final int MAX_OPTIONS = 10_000;

    /** Name of the option that carries the token. */
    public static final String TOKEN_OPTION = "fence";

    /** Name of the option that carries the token's proof. */
    public static final String PROOF_OPTION = "fence-proof";

    private static final String COUNT = "GIT_PUSH_OPTION_COUNT";
    private static final int DISPLAY_LIMIT = 40;

    private PushOptionsReader() {}

    /**
     * Returns the push options in {@code env}.
     *
     * @param env the hook's environment
     * @throws InvalidInputException when the variables or the fence options are malformed
     */
    public static PushOptions read(Map<String, String> env) {
        String countText = env.get(COUNT);
        if (countText == null) {
            return PushOptions.none();
        }
        int count = parseCount(countText);
        List<String> all = new ArrayList<>(count);
        String tokenOption = null;
        OptionalLong token = OptionalLong.empty();
        String proof = null;
        for (int i = 0; i < count; i++) {
            String option = env.get("GIT_PUSH_OPTION_" + i);
            if (option == null) {
                throw new InvalidInputException(COUNT + " is " + count + " but GIT_PUSH_OPTION_" + i
                        + " is not set; the hook's environment is incomplete");
            }
            all.add(option);
            String name = nameOf(option);
            if (name.equals(TOKEN_OPTION)) {
                if (tokenOption != null) {
                    throw new InvalidInputException("push option fence= given twice (" + display(tokenOption) + " and "
                            + display(option) + "); send exactly one fence=<token>");
                }
                tokenOption = option;
                token = OptionalLong.of(parseToken(option));
            } else if (name.equals(PROOF_OPTION)) {
                if (proof != null) {
                    throw new InvalidInputException(
                            "push option fence-proof given twice; send exactly one fence-proof=<proof>");
                }
                proof = option.length() > PROOF_OPTION.length() ? option.substring(PROOF_OPTION.length() + 1) : "";
                if (!Proofs.isWellFormed(proof)) {
                    // Never echo the value: a proof, even a mangled one, is a credential.
                    throw new InvalidInputException("push option fence-proof: not a well-formed proof"
                            + " (expected fp2.<generation>.<holder>.<mac>; the value is not shown)");
                }
            }
        }
        if (proof != null && token.isEmpty()) {
            throw new InvalidInputException(
                    "push option fence-proof given without fence=<token>; send both or neither");
        }
        return new PushOptions(token, proof, all);
    }

    private static int parseCount(String text) {
        if (text.isEmpty() || text.length() > 5 || !allDigits(text)) {
            throw new InvalidInputException(
                    COUNT + "='" + display(text) + "' is not a whole number from 0 to " + MAX_OPTIONS);
        }
        int count = Integer.parseInt(text);
        if (count > MAX_OPTIONS) {
            throw new InvalidInputException(
                    COUNT + "=" + count + ": more than " + MAX_OPTIONS + " push options; fence refuses such a push");
        }
        return count;
    }

    /** The part before the first {@code =}, or the whole option when it has none. */
    private static String nameOf(String option) {
        int eq = option.indexOf('=');
        return eq < 0 ? option : option.substring(0, eq);
    }

    private static long parseToken(String option) {
        String value = option.length() > TOKEN_OPTION.length() ? option.substring(TOKEN_OPTION.length() + 1) : "";
        String problem = null;
        if (value.isEmpty()) {
            problem = "not a positive whole number (the value is empty)";
        } else if (!allDigits(value)) {
            problem = "not a positive whole number (only the digits 0-9, no sign or spaces)";
        } else if (value.charAt(0) == '0') {
            problem = value.length() == 1
                    ? "not a positive whole number (tokens start at 1)"
                    : "not a positive whole number (no leading zeros)";
        } else if (value.length() > 19
                || (value.length() == 19 && value.compareTo(Long.toString(Long.MAX_VALUE)) > 0)) {
            problem = "not a positive whole number (larger than " + Long.MAX_VALUE + ")";
        }
        if (problem != null) {
            throw new InvalidInputException("push option " + display(option) + ": " + problem);
        }
        return Long.parseLong(value);
    }

    /** ASCII digits only: {@link Long#parseLong} would also take '+' and non-ASCII digits. */
    private static boolean allDigits(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    private static String display(String text) {
        return Printable.escape(text, DISPLAY_LIMIT);
    }
}
