package dev.fence.testing;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** What tests that run store calls on other threads need of their futures. */
public final class Futures {
    private Futures() {}

    /**
     * The call's result, waiting at most 30 s; the call's own unchecked exception is thrown as it was, so a
     * test asserts on it as on a direct call.
     */
    public static <T> T outcome(Future<T> f) throws Exception {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }
}
