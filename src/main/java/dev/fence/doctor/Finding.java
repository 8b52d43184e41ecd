package dev.fence.doctor;

import java.util.Objects;

/**
 * One thing a check found.
 *
 * @param check the check's name, e.g. {@code redis.eviction}
 * @param status ok, warn or fail
 * @param detail what was found, one line, for an operator (never a password)
 * @param fix what to do about it, one line; null when {@code status} is {@link Status#OK}
 */
public record Finding(String check, Status status, String detail, String fix) {
    public Finding {
        Objects.requireNonNull(check, "check");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(detail, "detail");
        if (status != Status.OK) {
            Objects.requireNonNull(fix, "a warning or failure needs a fix");
        }
    }

    public static Finding ok(String check, String detail) {
        return new Finding(check, Status.OK, detail, null);
    }

    public static Finding warn(String check, String detail, String fix) {
        return new Finding(check, Status.WARN, detail, fix);
    }

    public static Finding fail(String check, String detail, String fix) {
        return new Finding(check, Status.FAIL, detail, fix);
    }
}
