package dev.fence.hookpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The system properties fence sets at start-up: only where the operator set none, and the ones that suit
 * only a short-lived process only in a hook.
 */
class JvmPropertiesTest {
    private static final List<String> NAMES = List.of(
            "jdk.reflect.useNativeAccessorOnly",
            "jdk.includeInExceptions",
            "slf4j.provider",
            "slf4j.internal.verbosity");

    private final Properties saved = new Properties();

    @BeforeEach
    void clear() {
        for (String name : NAMES) {
            String value = System.getProperty(name);
            if (value != null) {
                saved.setProperty(name, value);
            }
            System.clearProperty(name);
        }
    }

    @AfterEach
    void restore() {
        for (String name : NAMES) {
            String value = saved.getProperty(name);
            if (value == null) {
                System.clearProperty(name);
            } else {
                System.setProperty(name, value);
            }
        }
    }

    @Test
    void aHookGetsNativeReflectionOtherCommandsKeepTheJdksDefault() {
        JvmSettings.applyProperties(false);
        assertNull(System.getProperty("jdk.reflect.useNativeAccessorOnly"));
        assertEquals("org.slf4j.nop.NOPServiceProvider", System.getProperty("slf4j.provider"));
        assertEquals("hostInfoExclSocket", System.getProperty("jdk.includeInExceptions"));

        JvmSettings.applyProperties(true);
        assertEquals("true", System.getProperty("jdk.reflect.useNativeAccessorOnly"));
    }

    @Test
    void whatTheOperatorSetIsKept() {
        System.setProperty("jdk.reflect.useNativeAccessorOnly", "false");
        System.setProperty("jdk.includeInExceptions", "hostInfo");
        System.setProperty("slf4j.provider", "com.example.Provider");
        JvmSettings.applyProperties(true);
        assertEquals("false", System.getProperty("jdk.reflect.useNativeAccessorOnly"));
        assertEquals("hostInfo", System.getProperty("jdk.includeInExceptions"));
        assertEquals("com.example.Provider", System.getProperty("slf4j.provider"));
        assertNull(System.getProperty("slf4j.internal.verbosity"), "only set beside fence's own provider");
    }
}
