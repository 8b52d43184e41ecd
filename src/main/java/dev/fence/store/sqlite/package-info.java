/**
 * The embedded SQLite {@link dev.fence.core.LeaseStore}: one WAL-mode file shared by every fence process
 * on a machine. Its SQL lives next to it as resources ({@code schema.sql}, {@code statements.sql}).
 */
package dev.fence.store.sqlite;
