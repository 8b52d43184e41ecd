package dev.fence.bench;

import java.io.IOException;

/**
 * Fills a store fast with what its own writes would have left: leased branches (the resource record a
 * grant writes) and ledger events (the rows or stream entries an append writes), in bulk through the
 * store's own schema, so that a million events take seconds instead of a million round trips. The store
 * has been opened (schema and identity made) by fence itself first. A bulk write leaves the store
 * unsettled: whoever measures it next calls {@link #settle} first.
 */
interface Seeder extends AutoCloseable {
    /**
     * Writes seeded leases {@code from} to {@code to - 1} ({@link Seeded}), each held by its agent with
     * token {@code floor + 1} until {@code nowMillis + }{@link Seeded#LEASE_MILLIS}.
     */
    void leases(long from, long to, String generation, long floor, long nowMillis) throws IOException;

    /** Writes seeded events {@code from} to {@code to - 1}, event {@code j} dated {@code t0Millis + j}. */
    void events(long from, long to, long t0Millis) throws IOException;

    /** How many ledger events the store holds now. */
    long events() throws IOException;

    /**
     * Brings the store to the state of one that has run for a while, as the rows measure: nothing left
     * for its background upkeep to do during a measurement (PostgreSQL: vacuumed and analysed, its
     * checkpoint done). Called before a store is measured: on both stores of a comparison before each
     * row, so that neither carries the other's debt (the seeded one its bulk load, the empty one the dead
     * rows of every verdict the rows before made on it), and on a store seeded for the trim.
     */
    void settle() throws IOException;

    @Override
    void close();
}
