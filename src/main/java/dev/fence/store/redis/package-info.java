/**
 * The Redis {@link dev.fence.core.LeaseStore}: {@link dev.fence.store.redis.RedisLeaseStore}.
 *
 * <h2>Data model</h2>
 *
 * <ul>
 *   <li>{@code fence:meta} (hash): the store identity: {@code generation}, {@code floor} (epoch ms),
 *       {@code key} (base64 proof key), {@code createdAt} (epoch ms). Created from the caller's
 *       candidate by the script that finds it absent ({@code identity}; {@code acquire} when sent one,
 *       else it answers that there is none, and so does {@code identity_snapshot}, and the caller sends
 *       one). Its absence means the data was lost
 *       (a restart without persistence), so the new generation's floor, its creation time, puts new
 *       tokens above every earlier one, even where resource keys survived a partial loss.
 *   <li>{@code fence:{<resource>}:state} (hash, the resource as hash tag): {@code counter}, {@code
 *       highest}, {@code version}; the latest lease as {@code holder}, {@code token}, {@code grantedAt},
 *       {@code expiresAt}, {@code released}, {@code grantSha}; {@code baseToken}, {@code baseSha}, {@code
 *       lastTokenWriteSha}; the tip as {@code tipSha}, {@code tipToken}, {@code tipHolder}, {@code
 *       tipPusher}, {@code tipAt}. Absent fields are null, or 0 for numbers.
 *   <li>{@code fence:ledger} (stream): one entry per event, fields as in {@link
 *       dev.fence.core.LedgerEvent} with {@code at} in epoch ms and {@code type} the enum name; trimmed by
 *       age as events are appended, at most 256 entries an append ({@code XRANGE} then {@code XDEL}).
 *   <li>{@code fence:ledger:seq} (string): the counter behind each event's {@code seq}.
 *   <li>{@code fence:{<resource>}:events} and {@code fence:repo:{<repo>}:events} (sorted sets): the ledger's
 *       indexes, the ids of a resource's or a repo's stream entries scored by seq, so that a query by
 *       resource or repo reads only its own entries; ids trimmed off the stream are dropped from an index
 *       at its next event and skipped by queries until then. {@code indexedFrom} in {@code fence:meta} is
 *       the first indexed seq: while older entries remain, such queries read the stream instead.
 * </ul>
 *
 * <p>No key has a TTL; leases expire by comparing {@code expiresAt} with the caller's clock. Scripts live
 * beside this package as {@code .lua} resources and receive every key through {@code KEYS}.
 */
package dev.fence.store.redis;
