/**
 * The domain: fencing tokens, leases and grants ({@link dev.fence.core.LeaseService}), the admission rule
 * that judges a push ref by ref ({@link dev.fence.core.Admission}, design section 4), the FENCED message
 * ({@link dev.fence.core.FencedMessage}), the ledger's events and the store SPI ({@link
 * dev.fence.core.LeaseStore}) every store implements. Decisions are values ({@link dev.fence.core.Verdict},
 * {@link dev.fence.core.RefDecision}); failures are the small unchecked tree under {@link
 * dev.fence.core.FenceException}, with messages written for the operator.
 *
 * <p>Depends on the JDK alone ({@code java.*}, and {@code javax.crypto} for proofs): no picocli, Jedis,
 * JGit, Jackson, JDBC, HTTP or processes, and nothing else of fence (the architecture test enforces it).
 * No ambient state: time arrives as a {@link java.time.Clock}, the environment as a map. Types are public
 * where another package uses them, package-private otherwise.
 */
package dev.fence.core;
