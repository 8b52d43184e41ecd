package dev.fence.store.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.sqlite.SQLiteJDBCLoader;

class SqliteNativeTest {
    @Test
    void theCachedLibraryIsNamedAfterTheDriverThisBuildCarries() {
        // A driver upgrade must change the cached library's name, or a start would load the old library.
        assertEquals(SQLiteJDBCLoader.getVersion(), SqliteNative.DRIVER_VERSION);
    }
}
