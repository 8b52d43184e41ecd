package dev.fence.core;

/**
 * Fencing tokens. A token is a positive {@code long}, strictly increasing per resource: every grant
 * (and every bump by a tokenless push) takes the counter's next value in the same atomic step that
 * records the grant, so no two grants of one resource ever share a token and no grant ever sees a
 * smaller token than an earlier one. Tokens never carry a TTL and are never evicted.
 */
final class Tokens {
    /** "No token": a tokenless push, or a resource that has had no grant. */
    static final long NONE = 0L;

    private Tokens() {}
}
