package dev.fence.faults;

import dev.fence.core.Resources;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One fault's run as its {@link Scenarios scenario} sees it: where to put servers, the workload it
 * injects into, and the notes it reports. Owns every server and feeder it starts, and ends them on
 * {@link #close}. Used by the orchestrating thread only.
 */
final class FaultRun implements AutoCloseable {
    private final Fault fault;
    private final Path dir;
    private final Tools tools;
    private final PrintWriter progress;
    private final List<String> notes = new ArrayList<>();
    private final List<RedisNode> nodes = new ArrayList<>();
    private final List<PrivatePostgres> postgres = new ArrayList<>();
    private final List<Process> feeders = new ArrayList<>();
    private final List<Thread> feederThreads = new ArrayList<>();
    private volatile boolean closing;
    Workload workload;
    GitRepo repo;
    History history;

    /** The binaries the faults need; null where one is missing. */
    record Tools(Path git, Path redisServer, Path redisCli, Path postgresBin, Path runuser) {
        static Tools find(Map<String, String> env) {
            String path = env.get("PATH");
            return new Tools(
                    Children.find(path, "git"),
                    Children.find(path, "redis-server"),
                    Children.find(path, "redis-cli"),
                    PrivatePostgres.findBin(path),
                    Children.find(path, "runuser"));
        }
    }

    FaultRun(Fault fault, Path dir, Tools tools, PrintWriter progress) {
        this.fault = fault;
        this.dir = dir;
        this.tools = tools;
        this.progress = progress;
    }

    /** Starts a {@code redis-server} named {@code name} with {@code args}, its data in a directory of its own. */
    RedisNode redis(String name, String... args) throws IOException {
        RedisNode n = RedisNode.create(tools.redisServer(), tools.redisCli(), dir.resolve(name), List.of(args));
        nodes.add(n);
        n.start();
        return n;
    }

    /** The major version {@code redis-server --version} reports, or 0 when it reports none. */
    int redisMajorVersion() throws IOException {
        Children.Outcome o = Children.run(List.of(tools.redisServer().toString(), "--version"), null, 20);
        Matcher m = Pattern.compile("\\bv=(\\d+)\\.").matcher(o.out());
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    /**
     * Initialises and starts a PostgreSQL server named {@code name} with {@code settings} ({@code
     * postgresql.conf} lines), its data in a directory of its own.
     */
    PrivatePostgres postgres(String name, Map<String, String> settings) throws IOException {
        PrivatePostgres p = PrivatePostgres.init(tools.postgresBin(), tools.runuser(), dir.resolve(name), settings);
        postgres.add(p);
        p.start();
        return p;
    }

    /** Makes and starts a streaming standby of {@code primary} named {@code name}. */
    PrivatePostgres standby(PrivatePostgres primary, String name) throws IOException {
        PrivatePostgres p = PrivatePostgres.standbyOf(primary, dir.resolve(name));
        postgres.add(p);
        p.start();
        return p;
    }

    /** Records what the run did (shown in the report), and says it on the progress stream. */
    void note(String line) {
        notes.add(line);
        say(line);
    }

    void say(String line) {
        progress.println("[" + fault.id() + "] " + line);
        progress.flush();
    }

    List<String> notes() {
        return notes;
    }

    /**
     * Waits until some branch has taken an accepted push under a grant made after {@code sinceNanos}: the
     * writes a fault is meant to lose have happened. Returning at once then means that on that branch the last write
     * before the fault is most likely that push (the scenario kills next), so the successor that the lost
     * grant's token is granted to again builds on the lost holder's own commit: the incident's set-up.
     *
     * @return false when that did not happen within {@code timeout}
     */
    boolean awaitPush(long sinceNanos, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            for (String b : repo.branches()) {
                String ref = "refs/heads/" + b;
                if (history.wroteSince(ref, Resources.forRef(GitRepo.REPO_ID, ref), sinceNanos)) {
                    return true;
                }
            }
            RedisNode.sleep(5);
        }
        return false;
    }

    /** Points the clients and the hook at {@code url}, as an operator (or Sentinel) does after a failover. */
    void switchStore(String url) throws IOException {
        workload.switchStore(url);
        repo.install(url);
    }

    /**
     * Starts a {@code redis-cli} on {@code node} fed, until the run closes, one {@code line} per {@code
     * everyMillis} (each with {@code %d} replaced by a counter).
     */
    void feed(RedisNode node, String line, long everyMillis) throws IOException {
        Process p = Children.startFed(node.feedCommand());
        feeders.add(p);
        Thread t = new Thread(
                () -> {
                    try (OutputStream out = p.getOutputStream()) {
                        for (long i = 0; !closing && p.isAlive(); i++) {
                            out.write((String.format(line, i) + "\n").getBytes(StandardCharsets.UTF_8));
                            out.flush();
                            Thread.sleep(everyMillis);
                        }
                    } catch (IOException e) {
                        // the feeder ended: nothing more to write
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "fence-faults-feeder");
        t.setDaemon(true);
        feederThreads.add(t);
        t.start();
    }

    /** Ends the feeders (the servers stay up). */
    void stopFeeders() {
        closing = true;
        for (Thread t : feederThreads) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        feeders.forEach(Children::kill);
    }

    @Override
    public void close() {
        stopFeeders();
        nodes.forEach(RedisNode::close);
        postgres.forEach(PrivatePostgres::close);
    }
}
