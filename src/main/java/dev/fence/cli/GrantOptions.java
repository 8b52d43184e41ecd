package dev.fence.cli;

import dev.fence.core.Durations;
import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.json.GrantFiles;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The grant a command acts under, so that it travels from {@code fence lease acquire} to {@code exec},
 * {@code push}, {@code renew} and {@code release} instead of being looked up or taken again: {@code
 * --grant-file F} (written by {@code lease acquire --grant-file F}; names the resource, holder, token,
 * proof and TTL), else {@code --token N} with {@code --proof} or {@code FENCE_PROOF}, else {@code
 * FENCE_TOKEN} with {@code FENCE_PROOF} from the environment. The environment's grant is skipped when
 * {@code FENCE_RESOURCE} or {@code FENCE_HOLDER} names another resource or holder than the command's.
 * The file's format, and how it is written, are {@link GrantFiles}'s.
 */
final class GrantOptions {
    static final String TOKEN_ENV = "FENCE_TOKEN";
    static final String PROOF_ENV = "FENCE_PROOF";
    static final String RESOURCE_ENV = "FENCE_RESOURCE";
    static final String HOLDER_ENV = "FENCE_HOLDER";

    @Option(
            names = "--holder",
            paramLabel = "NAME",
            description = "The lease holder (agent name); with --grant-file, the file's holder by default.")
    String holder;

    @Option(
            names = "--grant-file",
            paramLabel = "FILE",
            description = "Act under the grant in FILE, as written by 'fence lease acquire --grant-file FILE':"
                    + " its resource, holder, token, proof and TTL.")
    Path grantFile;

    @Option(
            names = "--token",
            paramLabel = "N",
            description = "Act under the holder's lease with this token (default: $FENCE_TOKEN).")
    Long token;

    @Option(
            names = "--proof",
            paramLabel = "PROOF",
            description = "The grant's proof (default: $FENCE_PROOF, which keeps it out of process listings);"
                    + " checked when given.")
    String proof;

    /**
     * A grant in hand.
     *
     * @param token the grant's token, or 0 when no grant was given
     * @param proof its proof, or null when not known
     * @param ttl the TTL it was granted with, or null when not known (a token without a grant file)
     */
    record Held(String resource, String holder, long token, String proof, Duration ttl) {
        boolean given() {
            return token != 0;
        }

        /** {@code option} parsed when given, else the grant's TTL. */
        Duration ttl(String option, String command) {
            if (option != null) {
                return Durations.parsePositive("--ttl", option);
            }
            if (ttl == null) {
                throw new InvalidInputException(command + " needs --ttl here: the grant's TTL is known only from"
                        + " its grant file (--grant-file); fence never falls back to a shorter default");
            }
            return ttl;
        }
    }

    /**
     * The resource, holder and grant the command names.
     *
     * @throws InvalidInputException when they are missing or contradict each other
     */
    Held resolve(Context ctx, ResourceOptions target) {
        Held file = fromFile(ctx);
        if (file != null) {
            boolean named = target.resource != null || target.repo != null || target.ref != null;
            if (named && !target.resource().equals(file.resource())) {
                throw new InvalidInputException(
                        "the grant in " + grantFile + " is for " + file.resource() + ", not " + target.resource());
            }
            return file;
        }
        return resolve(ctx, target.resource());
    }

    /** The grant of {@code --grant-file}, or null without one. */
    Held fromFile(Context ctx) {
        if (grantFile == null) {
            return null;
        }
        if (token != null || proof != null) {
            throw new InvalidInputException("give either --grant-file or --token/--proof, not both");
        }
        Grant g = GrantFiles.read(ctx.cwd().resolve(grantFile));
        if (holder != null && !holder.equals(g.holder())) {
            throw new InvalidInputException(
                    "the grant in " + grantFile + " is " + g.holder() + "'s, not " + holder + "'s");
        }
        Duration ttl =
                g.grantedAt() == null || g.expiresAt() == null ? null : Duration.between(g.grantedAt(), g.expiresAt());
        return new Held(g.resource(), g.holder(), g.token(), g.proof(), ttl);
    }

    /** The holder and grant for {@code resource} from {@code --token} or the environment (no grant file). */
    Held resolve(Context ctx, String resource) {
        Held file = fromFile(ctx);
        if (file != null) {
            return file;
        }
        if (holder == null) {
            throw new InvalidInputException("name the holder: --holder NAME (or --grant-file FILE)");
        }
        if (token != null) {
            if (token <= 0) {
                throw new InvalidInputException("--token must be a positive whole number; got " + token);
            }
            return new Held(resource, holder, token, proof != null ? proof : env(ctx, PROOF_ENV), null);
        }
        if (proof != null) {
            throw new InvalidInputException("--proof goes with --token");
        }
        String envToken = env(ctx, TOKEN_ENV);
        String envResource = env(ctx, RESOURCE_ENV);
        String envHolder = env(ctx, HOLDER_ENV);
        boolean mine = (envResource == null || envResource.equals(resource))
                && (envHolder == null || envHolder.equals(holder));
        if (envToken == null || !mine) {
            return new Held(resource, holder, 0, null, null);
        }
        long t;
        try {
            t = Long.parseLong(envToken);
        } catch (NumberFormatException e) {
            t = 0;
        }
        if (t <= 0) {
            throw new InvalidInputException(TOKEN_ENV + " must be a positive whole number; got '" + envToken + "'");
        }
        return new Held(resource, holder, t, env(ctx, PROOF_ENV), null);
    }

    /** As {@link #resolve}, requiring a grant (renew, release). */
    Held require(Context ctx, ResourceOptions target, String command) {
        return required(resolve(ctx, target), command);
    }

    /**
     * The grant for {@code resource} (null: the command's default resource), required: for commands that
     * name their resource their own way ({@code migrate}, {@code write}).
     */
    Held require(Context ctx, String resource, String command) {
        return required(resolve(ctx, resource), command);
    }

    private static Held required(Held h, String command) {
        if (!h.given()) {
            throw new InvalidInputException(command + " acts on a grant: give --grant-file FILE, or --token N (with"
                    + " the proof in FENCE_PROOF), or set FENCE_TOKEN and FENCE_PROOF");
        }
        return h;
    }

    private static String env(Context ctx, String name) {
        String v = ctx.env().get(name);
        return v == null || v.isBlank() ? null : v.strip();
    }
}
