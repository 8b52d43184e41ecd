package dev.fence.server;

import dev.fence.core.Globs;
import java.util.List;

/**
 * One API credential as the server keeps it: never the secret, only its hash.
 *
 * @param name the credential's name (the part before {@code :} in the bearer token)
 * @param role what it may do
 * @param hash SHA-256 of the secret
 * @param holders for {@link Role#AGENT}: globs of the holder names it may act as (empty: its own name)
 */
public record Credential(String name, Role role, byte[] hash, List<String> holders) {
    public Credential {
        hash = hash.clone();
        holders = List.copyOf(holders);
    }

    @Override
    public byte[] hash() {
        return hash.clone();
    }

    /** True when this credential may take, renew and release leases as {@code holder}. */
    public boolean mayActAs(String holder) {
        if (role == Role.ADMIN) {
            return true;
        }
        if (role != Role.AGENT || holder == null) {
            return false;
        }
        if (holders.isEmpty()) {
            return holder.equals(name);
        }
        for (String glob : holders) {
            if (Globs.matches(glob, holder)) {
                return true;
            }
        }
        return false;
    }

    /** True when the credential's role is one of {@code allowed}, or admin. */
    public boolean hasRole(java.util.Set<Role> allowed) {
        return role == Role.ADMIN || allowed.contains(role);
    }

    @Override
    public String toString() {
        return "Credential[" + name + ", " + role.label() + ", holders=" + holders + "]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Credential c
                && c.name.equals(name)
                && c.role == role
                && java.util.Arrays.equals(c.hash, hash)
                && c.holders.equals(holders);
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }
}
