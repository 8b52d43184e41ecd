package dev.fence.mcp;

import dev.fence.core.Durations;
import dev.fence.core.InvalidInputException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * A tool call's arguments, checked against what the tool takes: every failure names the argument, so the
 * model can fix its call. The proof, the token and the expected SHA are no tool's arguments: they stay in
 * the server, and naming them is refused with a sentence that says so.
 */
final class Arguments {
    private static final Set<String> SECRET =
            Set.of("proof", "fence-proof", "fence_proof", "token", "expected_sha", "expectedSha", "grant_sha");

    private final String tool;
    private final Map<String, Object> values;

    /** A bad argument, named. */
    static final class Invalid extends InvalidInputException {
        private static final long serialVersionUID = 1L;

        final String argument;

        Invalid(String argument, String message) {
            super(message);
            this.argument = argument;
        }
    }

    /**
     * @param allowed the arguments the tool takes
     * @throws Invalid for an argument the tool does not take
     */
    Arguments(String tool, Map<String, Object> values, Set<String> allowed) {
        this.tool = tool;
        this.values = values == null ? Map.of() : values;
        for (String name : this.values.keySet()) {
            if (SECRET.contains(name)) {
                throw new Invalid(
                        name,
                        tool + " takes no " + name + ": the lease's token, proof and expected SHA stay inside fence,"
                                + " which applies them itself; name only the " + String.join(" or ", allowed));
            }
            if (!allowed.contains(name)) {
                throw new Invalid(
                        name, tool + " takes no argument '" + name + "'; it takes " + String.join(", ", allowed));
            }
        }
    }

    boolean has(String name) {
        return values.get(name) != null;
    }

    /** A non-blank string, or null when absent and not {@code required}. */
    String string(String name, boolean required) {
        Object v = values.get(name);
        if (v == null) {
            if (required) {
                throw new Invalid(name, tool + " needs the argument " + name);
            }
            return null;
        }
        if (!(v instanceof String s)) {
            throw new Invalid(name, "argument " + name + " must be a string; got " + describe(v));
        }
        if (s.isBlank()) {
            throw new Invalid(name, "argument " + name + " must not be empty");
        }
        return s;
    }

    /** A string that may be empty (file content), required. */
    String text(String name) {
        Object v = values.get(name);
        if (!(v instanceof String s)) {
            throw new Invalid(
                    name,
                    v == null
                            ? tool + " needs the argument " + name
                            : "argument " + name + " must be a string; got " + describe(v));
        }
        return s;
    }

    /** A boolean, {@code otherwise} when absent. */
    boolean bool(String name, boolean otherwise) {
        Object v = values.get(name);
        if (v == null) {
            return otherwise;
        }
        if (!(v instanceof Boolean b)) {
            throw new Invalid(name, "argument " + name + " must be true or false; got " + describe(v));
        }
        return b;
    }

    /** A duration such as {@code 45s} or {@code 5m}, or {@code otherwise} when absent. */
    Duration duration(String name, Duration otherwise) {
        String text = string(name, false);
        if (text == null) {
            return otherwise;
        }
        try {
            return Durations.parsePositive("argument " + name, text);
        } catch (InvalidInputException e) {
            throw new Invalid(name, e.getMessage());
        }
    }

    private static String describe(Object v) {
        if (v instanceof Map<?, ?>) {
            return "an object";
        } else if (v instanceof Iterable<?>) {
            return "a list";
        }
        String s = String.valueOf(v);
        return "'" + (s.length() > 60 ? s.substring(0, 60) + "..." : s) + "'";
    }
}
