/**
 * Opening stores: {@link dev.fence.store.Stores} parses a store URL ({@code sqlite:}, {@code redis://},
 * {@code redis-sentinel://}, {@code postgresql://}) and picks the implementation, with the {@link
 * dev.fence.store.StoreOptions} it is opened with; helpers the implementations share (their SQL and
 * script resources, set-up checks). The SPI itself is {@link dev.fence.core.LeaseStore}; its contract
 * suite runs against every implementation.
 *
 * <p>May depend on {@code dev.fence.core} and the JDK. The product names the concrete stores in {@code
 * store.sqlite}, {@code store.redis} and {@code store.postgres} only here (the bench, a tool, reaches into
 * the Redis one to measure it); their own libraries (JDBC, Jedis, the PostgreSQL driver) stay in those
 * packages. Must not import picocli or {@code dev.fence.cli}.
 */
package dev.fence.store;
