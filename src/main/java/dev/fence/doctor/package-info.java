/**
 * {@code fence doctor}'s checks: each a {@link dev.fence.doctor.Check} that reports {@link
 * dev.fence.doctor.Finding}s ({@code ok}, {@code warn} or {@code fail}, each failing one with a one-line
 * fix), gathered by {@link dev.fence.doctor.Doctor} into a {@link dev.fence.doctor.Report}. The store's
 * checks are {@link dev.fence.doctor.StoreChecks}; {@code fence serve} runs their set-up part at start.
 *
 * <p>Checks read the world through the store SPI and {@link dev.fence.store.Stores}, never a concrete
 * store or its client library, and print nothing: the CLI renders the report. A new kind of check (the
 * git host's, for instance) is one more {@code Check} handed to {@link dev.fence.doctor.Doctor#examine}.
 */
package dev.fence.doctor;
