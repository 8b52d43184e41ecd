package dev.fence.core;

import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;

/** Makes candidate store identities: a random generation id and proof key, floor = now in epoch ms. */
public final class Identities {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Identities() {}

    /** A fresh candidate for {@link LeaseStore#identity}; stores keep it only if they have none. */
    public static StoreIdentity candidate(Instant now) {
        // Stores keep instants in whole milliseconds; a candidate kept by a store then equals itself.
        now = Instant.ofEpochMilli(now.toEpochMilli());
        byte[] id = new byte[12];
        byte[] key = new byte[32];
        RANDOM.nextBytes(id);
        RANDOM.nextBytes(key);
        return new StoreIdentity(
                Base64.getUrlEncoder().withoutPadding().encodeToString(id), now.toEpochMilli(), key, now);
    }
}
