package dev.fence.install;

import dev.fence.core.ConfigException;
import dev.fence.core.FencePolicy;
import dev.fence.hook.HookEnvironments;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What the curl shim's {@value HookScripts#SHIM_CONF} says besides the server and the credential: the
 * facts the shim cannot work out without deciding something itself, derived here, in Java, from the policy
 * and the host.
 *
 * <ul>
 *   <li>{@code FENCE_PUSH_VARIABLES}: which of the hook's variables it sends ({@link
 *       HookEnvironments#HOST_VARIABLES});
 *   <li>{@code FENCE_REPO_ID} (plain git: the repo id the server names resources after) or {@code
 *       FENCE_REPO_ID_FROM} (the host variable that holds it, for the lines the shim prints alone);
 *   <li>{@code FENCE_FENCED_REFS}: the policy's fenced patterns as bash patterns. When the server cannot be
 *       asked the shim refuses the updates of these refs and lets the rest through: {@link
 *       dev.fence.core.Admission#storeDown} under {@link FencePolicy#failingClosed()}, which is what the Java
 *       hook in server mode answers then. Nothing else of that verdict depends on the policy.
 * </ul>
 *
 * @param policy the policy {@code fence serve} judges with (its fence.conf), whose fenced refs apply when
 *     it is down
 * @param repoId plain git: the repo id, else null
 * @param repoIdVariable other hosts: the variable holding the repo id ({@code GL_REPOSITORY}, {@code
 *     GITHUB_REPO_NAME}), else null
 */
public record ShimSettings(FencePolicy policy, String repoId, String repoIdVariable) {

    /** What {@code ?} becomes in a pattern; the shim expands it to one UTF-8 character other than {@code /}. */
    static final String ONE_CHARACTER = "@(?)";

    /** The settings lines, {@code KEY=VALUE}, with a comment saying where they come from. */
    List<String> lines() {
        List<String> out = new ArrayList<>();
        out.add("# Written by fence install from the policy and the host, and read from this file only: rerun");
        out.add("# fence install --shim curl after changing fenced-refs in the server's fence.conf.");
        out.add("FENCE_PUSH_VARIABLES=" + String.join(" ", HookEnvironments.HOST_VARIABLES));
        if (repoId != null) {
            out.add("FENCE_REPO_ID=" + repoId);
        }
        if (repoIdVariable != null) {
            out.add("FENCE_REPO_ID_FROM=" + repoIdVariable);
        }
        out.add("# When fence serve cannot be asked, updates of these refs are refused (fail closed); others pass.");
        List<String> patterns = new ArrayList<>();
        for (String p : policy.fencedRefs()) {
            patterns.add(bashPattern(p));
        }
        out.add("FENCE_FENCED_REFS=" + String.join(" ", patterns));
        return out;
    }

    /**
     * A fenced-ref glob ({@link dev.fence.core.Globs}) as a bash extglob pattern that matches the same ref
     * names: {@code **} as {@code *}, {@code *} as {@code *([!/])}, {@code ?} as {@link #ONE_CHARACTER}
     * (which the shim expands to one UTF-8 character other than {@code /}), and every other character
     * literal (bash's pattern characters escaped).
     *
     * @throws ConfigException for a pattern with white space, which the shim's list cannot hold (no ref
     *     name has any)
     */
    static String bashPattern(String glob) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            if (Character.isWhitespace(c) || Character.isISOControl(c)) {
                throw new ConfigException("fenced-refs pattern '" + glob + "' has white space; no ref name does");
            }
            if (c == '*' && i + 1 < glob.length() && glob.charAt(i + 1) == '*') {
                out.append('*');
                i++;
            } else if (c == '*') {
                out.append("*([!/])");
            } else if (c == '?') {
                // One character, not one byte: the shim matches in the C locale, where a character of a
                // UTF-8 ref name is one to four bytes. It replaces this mark (which no escaped literal
                // can spell: '(' and ')' are always escaped) with a pattern of the UTF-8 sequences.
                out.append(ONE_CHARACTER);
            } else if ("\\[]()|@!+'\"$`{}&;<>#~^=".indexOf(c) >= 0) {
                out.append('\\').append(c);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** The server to write into {@code conf}: {@code server} when given, else the one {@code conf} already names. */
    static String serverFor(Path conf, String server) {
        return server != null ? server : existing(conf, "FENCE_SERVER");
    }

    /**
     * The text of {@code conf} for {@code server} and these settings, with {@code credential} (from {@code
     * --credential-file}, never a command line) or else the hook credential {@code conf} already holds.
     */
    String confFor(Path conf, String server, String credential) {
        return HookScripts.shimConf(server, credential != null ? credential : existing(conf, "FENCE_CREDENTIAL"), this);
    }

    /**
     * The next step that tells the administrator to add the hook credential to {@code conf}, or none when
     * {@code conf} holds one now.
     *
     * @param name the credential name to suggest
     */
    static List<String> credentialStep(Path conf, String name) {
        if (existing(conf, "FENCE_CREDENTIAL") != null) {
            return List.of();
        }
        return List.of("Make a hook credential on the fence server and put it in " + conf + " as FENCE_CREDENTIAL=…"
                + " (or rerun with --credential-file FILE):\n"
                + "    fence serve credentials add --name " + name + " --role hook --file <credentials file> > FILE");
    }

    /** The value of {@code key} in an existing shim configuration, or null (kept across installs). */
    static String existing(Path conf, String key) {
        if (!Files.isRegularFile(conf)) {
            return null;
        }
        try {
            for (String line : Files.readAllLines(conf, StandardCharsets.UTF_8)) {
                int eq = line.indexOf('=');
                if (eq > 0 && line.substring(0, eq).strip().equals(key)) {
                    String value = line.substring(eq + 1).strip();
                    return value.isEmpty() ? null : value;
                }
            }
            return null;
        } catch (IOException e) {
            throw new ConfigException("cannot read " + conf + ": " + e.getMessage(), e);
        }
    }
}
