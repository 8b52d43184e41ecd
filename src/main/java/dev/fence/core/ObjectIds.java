package dev.fence.core;

/**
 * Git object ids as lower-case hex: 40 digits for SHA-1 repositories, 64 for SHA-256 ones. The all-zero
 * id of either length stands for "no object" (a ref being created or deleted).
 */
public final class ObjectIds {
    /** The SHA-1 zero id, used in fence's own records for "no ref". */
    public static final String ZERO = "0".repeat(40);

    private ObjectIds() {}

    /** True when {@code id} is a well-formed SHA-1 or SHA-256 object id in lower-case hex. */
    public static boolean isValid(String id) {
        if (id == null || (id.length() != 40 && id.length() != 64)) {
            return false;
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    /** True for the all-zero id of either length (and for null, which fence uses for "unknown"). */
    public static boolean isZero(String id) {
        if (id == null) {
            return true;
        }
        for (int i = 0; i < id.length(); i++) {
            if (id.charAt(i) != '0') {
                return false;
            }
        }
        return true;
    }

    /** The first 12 digits, for messages. */
    public static String abbreviate(String id) {
        return id == null ? "(none)" : id.length() > 12 ? id.substring(0, 12) : id;
    }
}
