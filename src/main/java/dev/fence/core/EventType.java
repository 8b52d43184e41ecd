package dev.fence.core;

import java.util.Locale;

/** Kinds of ledger events. The lower-case name is what JSON output and filters use. */
public enum EventType {
    /** A lease was granted (token = the new token). */
    GRANT,
    /** A lease was released by its holder. */
    RELEASE,
    /**
     * A lease was seen to have lapsed (holder and token of the lapsed lease), dated at its expiry: by the
     * next acquire, or by its holder's renew, which then also appends a {@link #RENEW}.
     */
    EXPIRE,
    /** A push was admitted with a valid current token. */
    ACCEPT,
    /** A tokenless push was admitted and bumped the resource's counter (token = the bumped value). */
    BUMP,
    /** A tokenless push was admitted under the {@code allow} policy without bumping. */
    ALLOW,
    /** A push was refused (reason says why). */
    REJECT,
    /** An admitted push was seen to land on the ref (recorded after the update, where the host allows). */
    LANDED,
    /**
     * An admitted push was seen not to land: a later hook refused the ref, or another push won git's
     * compare-and-swap of it. It superseded no lease and is not the last write ({@link Landings}).
     */
    UNLANDED,
    /**
     * The store's ledger retention was changed (an admin's act, which in direct mode any client with the
     * store's credentials can do): on {@link LedgerEvent#STORE_RESOURCE}, pusher = who changed it (the
     * OS user the command ran as), detail = the old and the new value. Appended in the same atomic step
     * as the change and before the new retention trims anything, so the change is never silent.
     */
    RETENTION,
    /**
     * A lease that had lapsed was renewed by its holder before anyone superseded it (holder and token of
     * the lease), dated at the renewal: the lease is held again from then on. Appended in the same atomic
     * step as the {@link #EXPIRE} dated at its lapse; a renew of a live lease appends nothing.
     */
    RENEW;

    /** The name used in JSON and on the command line. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@link #label()} (any case). */
    public static EventType parse(String label) {
        try {
            return valueOf(label.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidInputException("unknown event type '" + label + "'");
        }
    }
}
