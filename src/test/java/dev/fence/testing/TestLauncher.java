package dev.fence.testing;

import dev.fence.hookpath.JvmSettings;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code fence} launcher for tests: a script that runs {@code dev.fence.cli.Main} from this JVM's class
 * path with the flags of {@link JvmSettings}, as the real launcher starts a short-lived command: its
 * start-up flags and the options this JDK needs whatever fence runs (without them JDK 22+ warns on stderr
 * about sqlite-jdbc's native access, which a hook would show every pusher).
 */
public final class TestLauncher {
    private TestLauncher() {}

    /** Writes the launcher to {@code script} (creating its directory) unless it is there; returns it. */
    public static Path write(Path script) {
        if (Files.exists(script)) {
            return script;
        }
        StringBuilder body = new StringBuilder("#!/bin/sh\nexec '")
                .append(Path.of(System.getProperty("java.home"), "bin", "java"))
                .append("'");
        List<String> options = new ArrayList<>(JvmSettings.withSharing(JvmSettings.OPTIONS));
        options.addAll(JvmSettings.jdkOptions(Runtime.version().feature()));
        for (String option : options) {
            body.append(' ').append(option);
        }
        body.append(" -cp '")
                .append(System.getProperty("java.class.path"))
                .append("' ")
                .append(JvmSettings.MAIN)
                .append(" \"$@\"\n");
        try {
            Files.createDirectories(script.getParent());
            Files.writeString(script, body);
            Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return script;
    }
}
