package dev.fence.core;

import java.util.Locale;

/** The git hosts fence's hook knows how to read. */
public enum HostKind {
    PLAIN,
    GITEA,
    GITLAB,
    GHES;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
