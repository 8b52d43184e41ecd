package dev.fence.install;

import java.util.Locale;

/**
 * What an installed hook script runs ({@code --shim}): fence itself on a JRE, or the curl shim that asks
 * {@code fence serve} for the verdict, for hook environments without Java or store access (GHES's
 * default environment has bash and curl).
 */
public enum GhesShim {
    /** The script runs the JRE on fence.jar (GHES: inside a custom hook environment). */
    JAVA,
    /** The script is {@code hooks/pre-receive-curl.sh}: bash + curl against {@code fence serve}. */
    CURL;

    /** The command-line spelling ({@code --shim java}). */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
