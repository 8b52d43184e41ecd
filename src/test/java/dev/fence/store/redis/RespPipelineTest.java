package dev.fence.store.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.testing.PrivateRedis;
import dev.fence.testing.ProcessTest;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/** The connection a long-running process's threads share, against a private redis-server. */
@ProcessTest
class RespPipelineTest {
    @RegisterExtension
    static final PrivateRedis redis = new PrivateRedis();

    private RespPipeline pipeline;

    @BeforeEach
    void open() {
        pipeline = new RespPipeline(RedisUrl.parse(redis.running().url()), 1000, "fence-test");
    }

    @AfterEach
    void close() {
        pipeline.close();
        redis.server().thaw();
    }

    @Test
    void concurrentCallersEachGetTheirOwnReply() throws Exception {
        int threads = 16;
        int calls = 300;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                done.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < calls; i++) {
                        String word = "caller-" + me + "-call-" + i;
                        assertEquals(word, pipeline.call(List.of("ECHO", word)));
                        // A counter of its own: replies that went to another caller would skip or repeat.
                        assertEquals((long) i + 1, pipeline.call(List.of("INCR", "pipeline-test:" + me)));
                    }
                    return calls;
                }));
            }
            start.countDown();
            for (Future<Integer> f : done) {
                assertEquals(calls, f.get(60, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Callers that all call at once, round after round, keep handing the reading over between them; one
     * left parked with its reply unread would time out (the pipeline's timeout is a second).
     */
    @Test
    void callersInLockStepAreNeverLeftWaiting() throws Exception {
        int threads = 8;
        int rounds = 1500;
        CyclicBarrier barrier = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < rounds; i++) {
                        barrier.await(10, TimeUnit.SECONDS);
                        String word = me + "/" + i;
                        assertEquals(word, pipeline.call(List.of("ECHO", word)));
                    }
                    return rounds;
                }));
            }
            for (Future<Integer> f : done) {
                assertEquals(rounds, f.get(120, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anErrorReplyFailsOnlyItsOwnCall() {
        pipeline.call(List.of("SET", "pipeline-test:text", "not a number"));
        JedisDataException e =
                assertThrows(JedisDataException.class, () -> pipeline.call(List.of("INCR", "pipeline-test:text")));
        assertTrue(e.getMessage().contains("not an integer"), e.getMessage());
        assertEquals("still here", pipeline.call(List.of("ECHO", "still here")));
    }

    @Test
    void aServerRestartedBetweenCallsFailsTheNextCallOnceThenIsConnectedToAgain() throws Exception {
        RespPipeline.Wire first = pipeline.wire();
        assertEquals("PONG", pipeline.call(List.of("PING")));
        assertTrue(first.answered());
        redis.server().restart();
        // Nothing reads an idle connection, so its loss shows on the next call: one that had answered
        // before, which is how the store tells a stale connection and retries once on a new one.
        assertThrows(JedisConnectionException.class, () -> pipeline.call(List.of("PING")));
        assertTrue(first.answered());
        assertEquals("PONG", pipeline.call(List.of("PING")));
        assertNotSame(first, pipeline.wire());
        assertEquals("fence-test", pipeline.call(List.of("CLIENT", "GETNAME")), "the new connection is named too");
    }

    @Test
    void callsInFlightWhenTheConnectionDiesFailAndTheNextCallConnectsAgain() throws Exception {
        assertEquals("PONG", pipeline.call(List.of("PING")));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            // A command that waits on the server, so that it is in flight when the connection is killed.
            Future<Object> waiting = pool.submit(() -> pipeline.call(List.of("BLPOP", "pipeline-test:never", "0")));
            Thread.sleep(200);
            redis.server().command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(5, TimeUnit.SECONDS));
            assertInstanceOf(JedisConnectionException.class, e.getCause(), e.toString());
            assertFalse(
                    e.getCause().getCause() instanceof SocketTimeoutException, "failed by the server, not timed out");
        } finally {
            pool.shutdownNow();
        }
        assertEquals("PONG", pipeline.call(List.of("PING")));
    }

    @Test
    void aServerThatStopsAnsweringTimesOutAndIsLeft() {
        assertEquals("PONG", pipeline.call(List.of("PING")));
        RespPipeline.Wire hung = pipeline.wire();
        redis.server().freeze();
        long start = System.nanoTime();
        JedisConnectionException e = assertThrows(JedisConnectionException.class, () -> pipeline.call(List.of("PING")));
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertInstanceOf(SocketTimeoutException.class, e.getCause(), e.toString());
        assertTrue(waited >= 900 && waited < 5000, "waited " + waited + " ms for a 1000 ms timeout");
        redis.server().thaw();
        assertEquals("PONG", pipeline.call(List.of("PING")), "a new connection once the server answers");
        assertNotSame(hung, pipeline.wire());
    }

    @Test
    void aClosedPipelineRefusesCalls() {
        assertEquals("PONG", pipeline.call(List.of("PING")));
        pipeline.close();
        assertThrows(JedisConnectionException.class, () -> pipeline.call(List.of("PING")));
    }
}
