/**
 * {@code fence doctor}'s checks: each a {@link dev.fence.doctor.Check} that reports {@link
 * dev.fence.doctor.Finding}s ({@code ok}, {@code warn} or {@code fail}, each failing one with a one-line
 * fix), gathered by {@link dev.fence.doctor.Doctor} into a {@link dev.fence.doctor.Report}. The store's
 * checks are {@link dev.fence.doctor.StoreChecks}; {@code fence serve} runs their set-up part at start.
 *
 * <p>Checks read the world through the store SPI and {@link dev.fence.store.Stores}, never a concrete
 * store or its client library, and print nothing: the CLI renders the report. The git host's checks are
 * {@link dev.fence.doctor.RepoChecks}: a bare repository through the real {@code git}, the hook files
 * against what {@link dev.fence.install.InstalledHooks} says the installer writes today, and files judged
 * for the user the hooks run as ({@link dev.fence.doctor.Account}).
 */
package dev.fence.doctor;
