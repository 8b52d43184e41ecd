package dev.fence.testing;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fence.cli.Context;
import dev.fence.cli.Main;
import dev.fence.json.Json;
import dev.fence.store.StoreOptions;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Runs fence in-process through {@link Main#run(Context, String...)} with captured output. */
public final class FenceCli {
    private final Map<String, String> env;
    private final Clock clock;

    public FenceCli(Map<String, String> env, Clock clock) {
        this.env = Map.copyOf(env);
        this.clock = clock;
    }

    /** This fence with {@code name} set to {@code value} in its environment as well. */
    public FenceCli with(String name, String value) {
        Map<String, String> more = new java.util.HashMap<>(env);
        more.put(name, value);
        return new FenceCli(more, clock);
    }

    /**
     * This fence as the agent that kept {@code grant} (the JSON of {@code lease acquire --json}): its
     * token and proof in {@code FENCE_TOKEN} and {@code FENCE_PROOF}, as a harness passes them.
     */
    public FenceCli holding(com.fasterxml.jackson.databind.JsonNode grant) {
        return with("FENCE_TOKEN", grant.get("token").asText())
                .with("FENCE_PROOF", grant.get("proof").asText());
    }

    /** The outcome of one run. */
    public record Run(int exit, String out, String err) {
        /** Everything printed, for assertion messages. */
        public String all() {
            return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    /** Runs {@code fence args…} in {@code cwd} with empty stdin. */
    public Run run(Path cwd, String... args) {
        return run(cwd, new ByteArrayInputStream(new byte[0]), args);
    }

    /** Runs {@code fence args…} in {@code cwd} with {@code stdin}. */
    public Run runWithInput(Path cwd, String stdin, String... args) {
        return run(cwd, new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), args);
    }

    /** Runs with live writers the caller can watch while the command runs. */
    public Run run(Path cwd, InputStream in, StringWriter out, StringWriter err, String... args) {
        // The test's clock decides lease expiry, also in a store with a clock of its own (Redis).
        Context ctx = new Context(
                in,
                new PrintWriter(out, true),
                new PrintWriter(err, true),
                env,
                clock,
                cwd,
                StoreOptions.defaults().withCallerClock());
        int exit = Main.run(ctx, args);
        return new Run(exit, out.toString(), err.toString());
    }

    /**
     * {@code fence lease acquire --repo app --ref main --git-remote origin --json} in {@code clone}, the
     * lease the client tests work under; asserts it was granted and returns the grant.
     */
    public JsonNode acquireAppMain(Path clone, String holder, String ttl) {
        Run r = runAcquireAppMain(clone, holder, "--ttl", ttl, "--json");
        if (r.exit() != 0) {
            throw new AssertionError("lease acquire failed: " + r.all());
        }
        try {
            return Json.read(r.out());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Runs {@code fence lease acquire --repo app --ref main --holder HOLDER --git-remote origin} with {@code
     * more} options in {@code clone}, whatever it answers (for tests that read its human output).
     */
    public Run runAcquireAppMain(Path clone, String holder, String... more) {
        List<String> args = new ArrayList<>(List.of(
                "lease", "acquire", "--repo", "app", "--ref", "main", "--holder", holder, "--git-remote", "origin"));
        args.addAll(List.of(more));
        return run(clone, args.toArray(new String[0]));
    }

    private Run run(Path cwd, InputStream in, String... args) {
        return run(cwd, in, new StringWriter(), new StringWriter(), args);
    }
}
