package dev.fence.install;

import java.util.Locale;

/**
 * What the GHES hook script runs. This is the extension point for hosts without a JRE in the hook
 * environment: a {@code CURL} variant (a bash + curl script that asks {@code fence serve} for the
 * verdict, so GHES's default environment suffices) is planned; adding it means a constant here and a
 * case in {@link GhesInstaller#install}.
 */
public enum GhesShim {
    /** The script runs the JRE on fence.jar inside a custom hook environment. */
    JAVA;

    /** The command-line spelling ({@code --shim java}). */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
