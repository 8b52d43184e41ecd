/**
 * The PostgreSQL {@link dev.fence.core.LeaseStore}: the shared store for high availability, whose grants
 * commit only once a synchronous standby has them (when the server is set up so). Its SQL lives next to it
 * as resources ({@code schema.sql}, {@code statements.sql}). The only package that imports the PostgreSQL
 * driver.
 */
package dev.fence.store.postgres;
