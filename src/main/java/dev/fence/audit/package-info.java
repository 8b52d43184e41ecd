/**
 * {@code fence audit}'s rendering of the ledger for people: the table of a query and the timeline that
 * lines up lease events and pushes for an incident review ({@link dev.fence.audit.AuditFormat}). JSON
 * lines are {@code dev.fence.json}'s.
 *
 * <p>May depend on {@code dev.fence.core} and the JDK; must not import picocli, a store, Jackson or {@code
 * dev.fence.cli}. Writes to the writer it is given, nothing else.
 */
package dev.fence.audit;
