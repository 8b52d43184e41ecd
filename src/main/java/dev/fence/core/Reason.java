package dev.fence.core;

/**
 * Machine reason codes, printed as {@code reason=<code>} on FENCED lines and stored in the ledger.
 * Never renamed: agents and scripts match on them.
 */
public enum Reason {
    /** The token is lower than one a push was already admitted with. */
    STALE_TOKEN("stale-token"),
    /** A newer token was granted (or bumped) since this one. */
    SUPERSEDED("superseded"),
    /** The push would discard commits written under another token (or by another writer). */
    FOREIGN_OVERWRITE("foreign-overwrite"),
    /** The proof is missing, malformed or not a proof of this resource and token. */
    BAD_PROOF("bad-proof"),
    /** The proof belongs to an older generation of the store (its data was lost since). */
    OLD_GENERATION("old-generation"),
    /** The pusher must present a token here (agent pusher or reject policy). */
    TOKEN_REQUIRED("token-required"),
    /** A tokenless rewrite or delete would discard commits written under a token. */
    TOKENLESS_OVERWRITE("tokenless-overwrite"),
    /** The lease was released by its holder; a new acquire is needed. */
    RELEASED("released"),
    /** The holder named is not the holder of the current lease. */
    NOT_HOLDER("not-holder"),
    /**
     * One token number was granted to two holders (a store that lost data granted it again): the push's
     * proof names a holder other than the one the store or the repository's own record has for it.
     */
    DUPLICATE_TOKEN("duplicate-token"),
    /** The pusher is not one the configuration lets push for the proof's holder ({@code holder-pushers}). */
    PUSHER_NOT_HOLDER("pusher-not-holder"),
    /**
     * The lease store is behind the repository's own record of accepted tokens: it was restored or failed
     * over without fence noticing, and is not trusted until an admin starts a new generation.
     */
    STORE_ROLLED_BACK("store-rolled-back"),
    /** The push options or input were malformed. */
    MALFORMED("malformed"),
    /** The store could not be reached in time. */
    STORE_DOWN("store-down"),
    /** Another ref of the same push was refused; the push is all-or-nothing. */
    OTHER_REF_REJECTED("other-ref-rejected"),
    /** The recorded expected SHA no longer matches the remote (force-with-lease refused the push). */
    REMOTE_CHANGED("remote-changed"),
    /**
     * A shared file's content is not the one the writer read (its sha256 differs from the expected one):
     * someone else wrote it since.
     */
    FILE_CHANGED("file-changed"),
    /** The resource kept changing under concurrent pushes; nothing was recorded. */
    CONTENDED("contended"),
    /**
     * The pushed ref is a symbolic ref leading into fenced refs: git would update its target, so the push
     * must name the target itself.
     */
    SYMBOLIC_REF("symbolic-ref"),
    /**
     * The pushed ref names a fenced ref of a git namespace from outside it ({@code
     * refs/namespaces/<ns>/refs/heads/main}): fence judges that branch as repository {@code <repo-id>//<ns>},
     * so the push must go through the namespace.
     */
    NAMESPACED_REF("namespaced-ref"),
    /**
     * On a repository whose file system ignores case ({@code core.ignorecase}), the pushed ref is another
     * spelling (case, Unicode normalisation) of a fenced ref, or of the directory of one: git would write
     * that ref, so the push must name it as fence guards it.
     */
    REF_CASE_ALIAS("ref-case-alias"),
    /**
     * The hook's server answered with something that is not its verdict for this request (a proxy, a login
     * page, another service, a cut-off or replayed answer); the push was refused.
     */
    BAD_SERVER_REPLY("bad-server-reply"),
    /**
     * The hook's own configuration is broken or incomplete, or the server refused the hook's credential:
     * fenced refs are closed until an operator fixes it.
     */
    BAD_CONFIG("bad-config"),
    /** Admitted with a current token. */
    ACCEPTED("accepted"),
    /** Admitted tokenless; the counter was bumped. */
    BUMPED("bumped"),
    /** Admitted tokenless under the allow policy. */
    ALLOWED("allowed");

    private final String code;

    Reason(String code) {
        this.code = code;
    }

    /** The code as printed. */
    public String code() {
        return code;
    }

    /** Parses {@link #code()}; null when unknown. */
    public static Reason fromCode(String code) {
        for (Reason r : values()) {
            if (r.code.equals(code)) {
                return r;
            }
        }
        return null;
    }
}
