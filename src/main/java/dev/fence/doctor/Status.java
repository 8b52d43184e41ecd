package dev.fence.doctor;

import java.util.Locale;

/** How a finding judges what it found. */
public enum Status {
    /** Safe as it is. */
    OK,
    /** Works, but can lose grants or void leases in a failure: worth fixing. */
    WARN,
    /** Unsafe or unusable: fence refuses it or cannot work with it. */
    FAIL;

    /** {@code ok}, {@code warn} or {@code fail}, as printed and in JSON. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
