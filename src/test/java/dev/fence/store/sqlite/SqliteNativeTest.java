package dev.fence.store.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;
import org.sqlite.SQLiteJDBCLoader;

class SqliteNativeTest {
    @Test
    void theCachedLibraryIsNamedAfterTheDriverThisBuildCarries() {
        // A driver upgrade must change the cached library's name, or a start would load the old library.
        assertEquals(SQLiteJDBCLoader.getVersion(), SqliteNative.DRIVER_VERSION);
    }

    @Test
    void theDriversLoaderRecordsItsLibraryWhereFenceSetsIt() throws Exception {
        // Without the field fence still works (the driver loads its library itself) but every SQLite hook
        // opens the jar again: a driver upgrade that renames it must be noticed.
        Field loaded = SQLiteJDBCLoader.class.getDeclaredField(SqliteNative.LOADED_FIELD);
        assertEquals(boolean.class, loaded.getType());
        assertTrue(Modifier.isStatic(loaded.getModifiers()));
    }
}
