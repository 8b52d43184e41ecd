package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The SHA-1s the build generates, which the store sends without reading the scripts, are the scripts' own. */
class LuaScriptTest {
    private static Set<LuaScript> scripts() throws IllegalAccessException {
        Set<LuaScript> out = new java.util.LinkedHashSet<>();
        for (Field f : Scripts.class.getDeclaredFields()) {
            if (f.getType() == LuaScript.class && Modifier.isStatic(f.getModifiers())) {
                f.setAccessible(true);
                out.add((LuaScript) f.get(null));
            }
        }
        return out;
    }

    @Test
    void everyScriptsNameIsTheSha1OfItsText() throws Exception {
        for (LuaScript script : scripts()) {
            String actual = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1")
                            .digest(script.source().getBytes(StandardCharsets.UTF_8)));
            assertEquals(
                    actual,
                    script.sha1(),
                    script.name() + ".lua: the generated Scripts class does not name the script by its text");
        }
    }

    @Test
    void everyScriptResourceIsUsed() throws Exception {
        Set<String> declared = new TreeSet<>();
        for (LuaScript script : scripts()) {
            declared.add(script.name());
        }
        Set<String> resources = new TreeSet<>();
        try (Stream<Path> files = Files.list(resourceDir())) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".lua") && !n.equals("lib.lua"))
                    .forEach(n -> resources.add(n.substring(0, n.length() - ".lua".length())));
        }
        assertTrue(!resources.isEmpty(), "no scripts found");
        assertEquals(resources, declared);
    }

    private static Path resourceDir() throws URISyntaxException {
        return Path.of(LuaScript.class.getResource("lib.lua").toURI()).getParent();
    }
}
