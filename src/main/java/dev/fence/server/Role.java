package dev.fence.server;

import dev.fence.core.InvalidInputException;
import java.util.Locale;

/** What a credential may do. {@link #ADMIN} may do everything. */
public enum Role {
    /** Submit pushes for verdicts and record landed pushes (a git host's hook shim). */
    HOOK,
    /** Acquire, renew and release leases as the holder names the credential is bound to; read status. */
    AGENT,
    /** Read the ledger and lease status. */
    AUDITOR,
    /** Everything. */
    ADMIN;

    /** The spelling in the credentials file and on the command line. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@link #label()}. */
    public static Role parse(String text) {
        for (Role r : values()) {
            if (r.label().equals(text)) {
                return r;
            }
        }
        throw new InvalidInputException("unknown role '" + text + "' (expected hook, agent, auditor or admin)");
    }
}
