package dev.fence.core;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.util.Base64;
import java.util.function.Supplier;

/**
 * Makes candidate store identities: a random generation id and proof key, floor = now ({@link
 * StoreIdentity#floorAt}).
 */
public final class Identities {
    private Identities() {}

    /** Candidates made at {@code clock}'s time, each when asked ({@link LeaseStore#identityAndSnapshot}). */
    public static Supplier<StoreIdentity> candidates(Clock clock) {
        return new Candidates(clock);
    }

    private record Candidates(Clock clock) implements Supplier<StoreIdentity> {
        @Override
        public StoreIdentity get() {
            return candidate(clock.instant());
        }
    }

    /** A fresh candidate for {@link LeaseStore#identity}; stores keep it only if they have none. */
    public static StoreIdentity candidate(Instant now) {
        // Stores keep instants in whole milliseconds; a candidate kept by a store then equals itself.
        now = Instant.ofEpochMilli(now.toEpochMilli());
        byte[] id = new byte[12];
        byte[] key = new byte[32];
        // Rare (a store's first identity, or one after data loss): a generator per call.
        SecureRandom random = new SecureRandom();
        random.nextBytes(id);
        random.nextBytes(key);
        return new StoreIdentity(
                Base64.getUrlEncoder().withoutPadding().encodeToString(id),
                StoreIdentity.floorAt(now.toEpochMilli()),
                key,
                now);
    }
}
