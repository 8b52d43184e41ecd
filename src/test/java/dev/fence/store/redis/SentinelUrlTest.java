package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.ConfigException;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SentinelUrlTest {
    @Test
    void parsesSentinelsMasterDatabaseAndTheMastersCredentials() {
        SentinelUrl u = SentinelUrl.parse("redis-sentinel://fence:p%40ss@10.0.0.1:26380,s2,[::1]:7000/my%20master/3");
        assertEquals(
                List.of(
                        new RedisUrl(false, "10.0.0.1", 26380, "fence", "p@ss", 0),
                        new RedisUrl(false, "s2", 26379, "fence", "p@ss", 0),
                        new RedisUrl(false, "::1", 7000, "fence", "p@ss", 0)),
                u.sentinels());
        assertEquals("my master", u.masterName());
        assertEquals(new RedisUrl(false, "10.1.1.1", 6380, "fence", "p@ss", 3), u.master("10.1.1.1", 6380));
        assertEquals("redis-sentinel://fence:***@10.0.0.1:26380,s2:26379,[::1]:7000/my master/3", u.describe());

        SentinelUrl bare = SentinelUrl.parse("redis-sentinel://s1:26379/m/");
        assertEquals(0, bare.database());
        assertEquals(
                new RedisUrl(false, "s1", 26379, null, null, 0),
                bare.sentinels().get(0));
    }

    @Test
    void sentinelsGetTheirOwnCredentialsWhenTheQueryNamesThem() {
        SentinelUrl own = SentinelUrl.parse("redis-sentinel://u:master-pw@s1/m?sentinelPassword=s%26pw&timeout=1s");
        assertEquals(
                new RedisUrl(false, "s1", 26379, null, "s&pw", 0),
                own.sentinels().get(0));
        assertEquals("master-pw", own.password());

        SentinelUrl none = SentinelUrl.parse("redis-sentinel://:master-pw@s1/m?sentinelPassword=");
        assertEquals(
                new RedisUrl(false, "s1", 26379, null, null, 0),
                none.sentinels().get(0));

        SentinelUrl user = SentinelUrl.parse("redis-sentinel://s1/m?sentinelUser=watcher&sentinelPassword=pw");
        assertEquals(
                new RedisUrl(false, "s1", 26379, "watcher", "pw", 0),
                user.sentinels().get(0));
        assertFalse(user.describe().contains("pw"), user.describe());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "redis-sentinel://u:secret@s1:26379",
                "redis-sentinel://u:secret@s1:26379/",
                "redis-sentinel://u:secret@s1:26379/m/x",
                "redis-sentinel://u:secret@s1:26379/m/1/2",
                "redis-sentinel://u:secret@s1:0/m",
                "redis-sentinel://u:secret@s1:port/m",
                "redis-sentinel://u:secret@,s2/m",
                "redis-sentinel://u:secret@::1/m",
                "redis-sentinel://u:sec ret@s1/m",
                "redis-sentinel://s1/m?sentinelPassword=sec ret",
                "redis-sentinel://u:sec%zzret@s1/m"
            })
    void rejectsMalformedUrlsWithoutShowingAPassword(String url) {
        ConfigException e = assertThrows(ConfigException.class, () -> SentinelUrl.parse(url));
        assertFalse(e.getMessage().contains("sec"), e.getMessage());
        assertTrue(e.getMessage().startsWith("store URL"), e.getMessage());
    }

    @Test
    void storesKnowTheSchemeAndItsQueryOptions() {
        RedisLeaseStore s = (RedisLeaseStore)
                Stores.open("redis-sentinel://127.0.0.1:1/m?sentinelPassword=x&timeout=1s", StoreOptions.defaults());
        s.close();
        assertEquals("redis-sentinel://127.0.0.1:1/m", s.describe());
        ConfigException e = assertThrows(
                ConfigException.class,
                () -> Stores.open("redis-sentinel://127.0.0.1:1/m?nope=1", StoreOptions.defaults()));
        assertTrue(e.getMessage().contains("sentinelPassword"), e.getMessage());
        ConfigException plain = assertThrows(
                ConfigException.class,
                () -> Stores.open("redis://127.0.0.1:1?sentinelPassword=x", StoreOptions.defaults()));
        assertFalse(plain.getMessage().contains("sentinelPassword)"), plain.getMessage());
    }
}
