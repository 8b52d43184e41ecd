package dev.fence.store.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.lang.reflect.Executable;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Arrays;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteConnectionConfig;
import org.sqlite.util.Logger;
import org.sqlite.util.LoggerFactory;

/**
 * fence carries its own {@code org.sqlite.SQLiteConnectionConfig} and {@code org.sqlite.util.LoggerFactory}
 * (see those classes): each must stay a drop-in for the driver's, whose copy the shaded jar leaves out.
 */
class SqliteDriverPatchTest {
    private static Set<String> api(Class<?> c) {
        Set<String> out = new TreeSet<>();
        for (Executable e : c.getDeclaredMethods()) {
            if (!Modifier.isPrivate(e.getModifiers()) && !e.isSynthetic()) {
                out.add(describe(e) + " -> "
                        + ((java.lang.reflect.Method) e).getReturnType().getName());
            }
        }
        for (Executable e : c.getDeclaredConstructors()) {
            if (!Modifier.isPrivate(e.getModifiers())) {
                out.add(describe(e));
            }
        }
        return out;
    }

    private static String describe(Executable e) {
        return Modifier.toString(e.getModifiers() & (Modifier.PUBLIC | Modifier.PROTECTED | Modifier.STATIC)) + " "
                + e.getName()
                + Arrays.stream(e.getParameterTypes()).map(Class::getName).collect(Collectors.joining(",", "(", ")"));
    }

    @ParameterizedTest
    @ValueSource(classes = {SQLiteConnectionConfig.class, LoggerFactory.class})
    void hasTheDriversApi(Class<?> replacement) throws Exception {
        URL driverJar = SQLiteConfig.class.getProtectionDomain().getCodeSource().getLocation();
        try (URLClassLoader driverOnly = new URLClassLoader(new URL[] {driverJar}, null)) {
            Class<?> original = driverOnly.loadClass(replacement.getName());
            assertNotEquals(
                    replacement.getProtectionDomain().getCodeSource().getLocation(),
                    driverJar,
                    "the tests must run against fence's copy");
            assertEquals(api(original), api(replacement));
        }
    }

    @Test
    void theDriversMessagesAreDroppedUnbuilt() {
        Logger logger = LoggerFactory.getLogger(SqliteDriverPatchTest.class);
        Supplier<String> message = () -> {
            throw new AssertionError("a message was built");
        };
        logger.trace(message);
        logger.info(message);
        logger.warn(message);
        logger.error(message, new RuntimeException());
    }

    @Test
    void keepsTheDriversDefaultsAndMakesTheFormatterWhenAsked() {
        SQLiteConnectionConfig c = SQLiteConnectionConfig.fromPragmaTable(new Properties());
        assertEquals(SQLiteConfig.DateClass.INTEGER, c.getDateClass());
        assertEquals(SQLiteConfig.TransactionMode.DEFERRED, c.getTransactionMode());
        assertEquals(1L, c.getDateMultiplier());
        assertEquals(SQLiteConfig.DEFAULT_DATE_STRING_FORMAT, c.getDateStringFormat());
        assertEquals(SQLiteConfig.DEFAULT_DATE_STRING_FORMAT, c.getDateFormat().getPattern());
        c.setDateStringFormat("yyyy");
        assertEquals("yyyy", c.getDateFormat().getPattern());
        SQLiteConnectionConfig copy = c.copyConfig();
        assertEquals("yyyy", copy.getDateStringFormat());
        assertEquals(c.isGetGeneratedKeys(), copy.isGetGeneratedKeys());
    }
}
