package dev.fence.core;

/** Checks on git ref names, following {@code git check-ref-format} where it matters to fence. */
public final class RefNames {
    private RefNames() {}

    /**
     * Returns the full name of {@code ref}: names that start with {@code refs/} are kept, a bare branch
     * name becomes {@code refs/heads/<name>}.
     *
     * @throws InvalidInputException when the name could not be a git ref
     */
    public static String full(String ref) {
        String full = ref != null && ref.startsWith("refs/") ? ref : "refs/heads/" + ref;
        check(full);
        return full;
    }

    /**
     * Throws when {@code ref} is not a well-formed full ref name.
     *
     * @throws InvalidInputException naming the problem
     */
    public static void check(String ref) {
        if (ref == null || ref.isEmpty()) {
            throw new InvalidInputException("ref name must not be empty");
        }
        for (int i = 0; i < ref.length(); i++) {
            char c = ref.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                throw new InvalidInputException("ref name contains a control character (U+"
                        + String.format("%04X", (int) c) + ") at position " + i);
            }
            if (c == ' ' || c == '~' || c == '^' || c == ':' || c == '?' || c == '*' || c == '[' || c == '\\') {
                throw new InvalidInputException("ref name contains '" + c + "', which git forbids: " + ref);
            }
        }
        if (!ref.startsWith("refs/")
                || ref.endsWith("/")
                || ref.endsWith(".lock")
                || ref.endsWith(".")
                || ref.contains("..")
                || ref.contains("//")
                || ref.contains("@{")
                || ref.contains("/.")) {
            throw new InvalidInputException("not a valid full ref name: " + ref);
        }
        if (ref.length() > 1024) {
            throw new InvalidInputException("ref name is longer than 1024 characters");
        }
    }
}
