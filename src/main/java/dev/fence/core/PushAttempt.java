package dev.fence.core;

import java.util.List;

/**
 * Everything a pre-receive hook learned about one push: the repo, the pusher, the options and the ref
 * updates, in input order. A push is all-or-nothing: every update is admitted or none is.
 *
 * @param repoId the repo id that resource names are derived from ({@link Resources#forRef})
 * @param actor who pushed
 * @param options the fence push options
 * @param updates the ref updates, possibly empty
 */
public record PushAttempt(String repoId, Actor actor, PushOptions options, List<RefUpdate> updates) {
    public PushAttempt {
        updates = List.copyOf(updates);
    }
}
