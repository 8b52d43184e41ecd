package dev.fence.install;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.fence.core.ConfigException;
import dev.fence.core.Globs;
import dev.fence.testing.ProcessTest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The fenced patterns fence install writes for the curl shim match, in bash, exactly the refs the Java rule
 * ({@link Globs}) fences: the shim's server-down verdict rests on it.
 */
@ProcessTest
class ShimSettingsTest {
    private static final List<String> PATTERNS = List.of(
            "refs/heads/**",
            "refs/heads/*",
            "refs/heads/release/v?",
            "refs/heads/*/wip/**",
            "refs/heads/a(b)+c@!|x{y}$z",
            "refs/heads/**/x",
            "refs/tags/v*",
            "refs/heads/r?",
            "refs/heads/r??",
            "refs/heads/r*");

    private static final List<String> REFS = List.of(
            "refs/heads/main",
            "refs/heads/a/b",
            "refs/heads/release/v1",
            "refs/heads/release/v10",
            "refs/heads/release/v/",
            "refs/heads/team/wip/one/two",
            "refs/heads/team/x/wip/one",
            "refs/heads/a(b)+c@!|x{y}$z",
            "refs/heads/abc",
            "refs/heads/x",
            "refs/heads/q/r/x",
            "refs/tags/v1",
            "refs/tags/v1/2",
            "refs/notes/commits",
            "refs/heads/",
            "refs/heads/r\u00e9",
            "refs/heads/r\u00e9\u00e9",
            "refs/heads/r\u65e5",
            "refs/heads/r\ud83d\ude00",
            "refs/heads/rab",
            "refs/heads/ra",
            "refs/heads/r",
            "HEAD");

    @Test
    void bashMatchesTheRefsTheJavaGlobsMatch() throws Exception {
        StringBuilder script = new StringBuilder("shopt -s extglob\nexport LC_ALL=C\n");
        // The shim's own expansion of '?' (fence install writes it as a mark), taken from the script.
        String one = Files.readAllLines(Path.of("hooks/pre-receive-curl.sh")).stream()
                .map(String::strip)
                .filter(l -> l.startsWith("local one="))
                .findFirst()
                .orElseThrow()
                .substring("local ".length());
        script.append(one).append('\n');
        List<String> expected = new ArrayList<>();
        for (String p : PATTERNS) {
            String bash = ShimSettings.bashPattern(p);
            // As the shim reads it: a word of a line, its '?' marks expanded, then a pattern from a variable.
            script.append("read -r -a ps <<'EOP'\n").append(bash).append("\nEOP\n");
            script.append("ps[0]=${ps[0]//'").append(ShimSettings.ONE_CHARACTER).append("'/$one}\n");
            for (String ref : REFS) {
                script.append("r='").append(ref.replace("'", "'\\''")).append("'\n");
                script.append("if [[ \"$r\" == ${ps[0]} ]]; then echo yes; else echo no; fi\n");
                expected.add(p + " " + ref + " " + (Globs.matches(p, ref) ? "yes" : "no"));
            }
        }
        // A file, not an argument: ref names with characters beyond ASCII go to bash as their UTF-8 bytes.
        Path file = Files.createTempFile("globs", ".sh");
        Files.writeString(file, script, StandardCharsets.UTF_8);
        Process bash = new ProcessBuilder("bash", file.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        bash.waitFor(10, TimeUnit.SECONDS);
        Files.delete(file);
        String[] said = out.split("\n");
        List<String> got = new ArrayList<>();
        int i = 0;
        for (String p : PATTERNS) {
            for (String ref : REFS) {
                got.add(p + " " + ref + " " + (i < said.length ? said[i] : "(nothing)"));
                i++;
            }
        }
        assertEquals(String.join("\n", expected), String.join("\n", got), out);
    }

    @Test
    void aPatternWithWhiteSpaceIsRefused() {
        assertThrows(ConfigException.class, () -> ShimSettings.bashPattern("refs/heads/a b"));
    }

    @Test
    void theDefaultPolicyFencesEveryBranch() throws IOException {
        String conf = HookScripts.shimConf(
                "http://127.0.0.1:1", null, new ShimSettings(dev.fence.core.FencePolicy.defaults(), "app", null));
        assertEquals(true, conf.contains("\nFENCE_FENCED_REFS=refs/heads/*\n"), conf);
        assertEquals(true, conf.contains("\nFENCE_REPO_ID=app\n"), conf);
        assertEquals(
                true,
                conf.contains(
                        "\nFENCE_PUSH_VARIABLES=GL_* GITHUB_* GITEA_* GIT_PUSH_OPTION_* GIT_NAMESPACE REMOTE_USER USER LOGNAME\n"),
                conf);
    }
}
