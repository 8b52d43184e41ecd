package dev.fence.install;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Reading a hook back gives the launch it was written with, so fence doctor compares like with like. */
class InstalledHooksTest {
    private static final Launch.Launcher LAUNCHER = new Launch.Launcher("/opt/fence it's/bin/fence");

    private static final List<Launch> LAUNCHES = List.of(
            LAUNCHER,
            new Launch.Launcher("fence"),
            new Launch.JavaJar("/usr/lib/jvm/java 17/bin/java", "/opt/fence/fence.jar"),
            new Launch.Direct(LAUNCHER, "/usr/lib/jvm/java-17", "17.0.15", "/opt/fence/lib/fence.jar", null),
            new Launch.Direct(LAUNCHER, "/usr/lib/jvm/java-25", "25.0.1", "/opt/fence/lib/fence.jar", "sqlite"),
            new Launch.Direct(LAUNCHER, "/usr/lib/jvm/java-17", "17.0.15", "/opt/fence/lib/fence.jar", "redis"));

    @Test
    void everyLaunchTheInstallerWritesIsReadBackAndRegeneratesTheSameFile() {
        for (Launch l : LAUNCHES) {
            String pre = HookScripts.preReceive(l);
            assertEquals(Optional.of(l), InstalledHooks.launch("pre-receive", pre), pre);
            assertEquals(Optional.of(pre), InstalledHooks.expected("pre-receive", pre));
            String post = HookScripts.postReceive(l);
            // post-receive starts the JVM itself too where pre-receive does: it runs on every push.
            assertEquals(Optional.of(l), InstalledHooks.launch("post-receive", post), post);
            assertEquals(Optional.of(post), InstalledHooks.expected("post-receive", post));
        }
        String shim = HookScripts.curlShim();
        assertTrue(InstalledHooks.isShim(shim));
        assertEquals(Optional.of(shim), InstalledHooks.expected("pre-receive", shim));
    }

    @Test
    void aFileWhoseCommandLineWasEditedHasNoLaunchOfFences() {
        String pre = HookScripts.preReceive(LAUNCHER);
        assertEquals(Optional.empty(), InstalledHooks.launch("pre-receive", pre.replace(" hook pre-receive", "")));
        assertEquals(Optional.empty(), InstalledHooks.launch("post-receive", pre), "the other hook's command");
        assertEquals(Optional.empty(), InstalledHooks.expected("pre-receive", "#!/bin/sh\n# installed by fence\n"));
        String direct = HookScripts.preReceive(LAUNCHES.get(3));
        assertEquals(
                Optional.empty(),
                InstalledHooks.launch("pre-receive", direct.replace("fence-17.0.15.jsa", "evil.jsa")),
                "an archive no install writes");
    }

    @Test
    void wordsAreSplitAsTheShellSplitsWhatShellQuoteWrites() {
        for (String w : List.of("plain", "it's", "two words", "'", "", "a\"b", "$HOME")) {
            assertEquals(List.of("x", w, "y"), InstalledHooks.words("x " + Shell.quote(w) + " y"), w);
        }
    }
}
