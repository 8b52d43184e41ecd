package dev.fence.server;

import dev.fence.core.ConfigException;
import dev.fence.core.StoreUnavailableException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs store work on a bounded pool and stops waiting for it after the store timeout, so that a store
 * that hangs (a frozen Redis still accepts connections) costs a request at most that long: the caller
 * gets {@link StoreUnavailableException} and answers 503. The abandoned work finishes on its own when the
 * store's own socket timeout fires. Thread-safe.
 */
final class StoreCalls {
    private final ExecutorService pool;
    private final Duration timeout;
    private final ServerMetrics metrics;

    StoreCalls(ExecutorService pool, Duration timeout, ServerMetrics metrics) {
        this.pool = pool;
        this.timeout = timeout;
        this.metrics = metrics;
    }

    ExecutorService pool() {
        return pool;
    }

    /**
     * Runs {@code work} and returns its result.
     *
     * @param operation names the work in metrics
     * @throws StoreUnavailableException when the store fails or does not answer in time
     */
    <T> T call(String operation, Callable<T> work) {
        Future<T> f;
        try {
            f = pool.submit(work);
        } catch (RejectedExecutionException e) {
            metrics.storeError(operation);
            throw new StoreUnavailableException("the server has too many store calls waiting; try again shortly");
        }
        try {
            return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            metrics.storeError(operation);
            throw new StoreUnavailableException("the store did not answer within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while waiting for the store");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof StoreUnavailableException || cause instanceof ConfigException) {
                metrics.storeError(operation);
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(cause);
        }
    }
}
