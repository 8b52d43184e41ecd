/**
 * fence's JSON: the one configured Jackson mapper and the documented shape of every value fence prints
 * or serves ({@link dev.fence.json.Json}). Field names are a contract with scripts. {@link
 * dev.fence.json.GrantFiles} keeps a grant in a file (mode 0600) in that same shape: the one file format
 * a grant travels in, between commands and processes.
 *
 * <p>May depend on {@code dev.fence.core}, the value records of {@code dev.fence.migrate} and Jackson; with {@code dev.fence.server} and {@code
 * dev.fence.audit} the only place that imports Jackson. Must not import picocli, a store or {@code
 * dev.fence.cli}.
 */
package dev.fence.json;
