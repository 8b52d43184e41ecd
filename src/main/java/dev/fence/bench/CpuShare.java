package dev.fence.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a load's CPU went, per answer: this JVM's share without its load clients (fence serve, with its JIT
 * and collector), the load clients' own threads, the rest of the machine (the store's server and anything
 * else running), and how much of the machine stayed idle. A rate that stops growing while the machine is
 * not idle is bound by CPU, not by a lock or a queue; these figures say which part took the CPU.
 *
 * <p>The machine and this process are read from Linux's {@code /proc} ({@code /proc/stat}'s first line
 * and {@code /proc/self/stat}), in clock ticks of {@link #USER_HZ}; the clients' threads report their own
 * CPU time. Without {@code /proc} there is no share to give ({@link #take} returns null).
 *
 * @param serveMicros this JVM, less its load clients
 * @param clientMicros the load clients' threads
 * @param otherMicros every other process of the machine
 * @param idleShare the machine's idle time (waiting for I/O included) over its whole time, 0 to 1
 * @param stolenShare the time a virtual machine's host gave its CPUs to other guests, over the whole time
 */
record CpuShare(double serveMicros, double clientMicros, double otherMicros, double idleShare, double stolenShare) {
    /**
     * Clock ticks per second of {@code /proc}'s times: Linux's {@code USER_HZ}, which the kernel ABI fixes at
     * 100 whatever the kernel's own tick rate (proc(5), "sysconf(_SC_CLK_TCK)").
     */
    static final int USER_HZ = 100;

    private static final double MICROS_PER_TICK = 1e6 / USER_HZ;

    /**
     * The machine's and this process's CPU times at one instant, in clock ticks.
     *
     * @param busy the machine's time running anything (user, nice, system, interrupts)
     * @param idle the machine's idle time, waiting for I/O included
     * @param stolen the time a virtual machine's host ran other guests instead
     * @param process this process's user and system time
     */
    record Times(long busy, long idle, long stolen, long process) {}

    /** The times now, or null when this system has no {@code /proc} to read them from. */
    static Times take(Path proc) {
        try {
            String stat = Files.readString(proc.resolve("stat"), StandardCharsets.US_ASCII);
            String self = Files.readString(proc.resolve("self/stat"), StandardCharsets.US_ASCII);
            long[] machine = machine(stat);
            return new Times(machine[0], machine[1], machine[2], process(self));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * {@code /proc/stat}'s first line ({@code cpu user nice system idle iowait irq softirq steal guest
     * guest_nice}) as {busy, idle, stolen}. Guest time is already counted in user and nice, so it is left
     * out; kernels that print fewer columns are read as far as they go.
     *
     * @throws IllegalArgumentException when the text does not start with that line
     */
    static long[] machine(String stat) {
        String line = stat.lines().findFirst().orElse("");
        String[] f = line.trim().split(" +");
        if (f.length < 5 || !f[0].equals("cpu")) {
            throw new IllegalArgumentException("not /proc/stat: " + line);
        }
        long busy = 0;
        long idle = 0;
        long stolen = 0;
        for (int i = 1; i < f.length && i <= 8; i++) {
            long v = Long.parseLong(f[i]);
            if (i == 4 || i == 5) {
                idle += v;
            } else if (i == 8) {
                stolen += v;
            } else {
                busy += v;
            }
        }
        return new long[] {busy, idle, stolen};
    }

    /**
     * A process's user and system time from its {@code /proc/<pid>/stat}: fields 14 and 15, counted after the
     * command name's closing parenthesis, since the name itself may hold spaces and parentheses (proc(5)).
     *
     * @throws IllegalArgumentException when the text is not such a line
     */
    static long process(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("not a /proc/<pid>/stat line");
        }
        // After ") ": field 3 (state) is the first.
        String[] f = stat.substring(close + 1).trim().split(" +");
        if (f.length < 13) {
            throw new IllegalArgumentException("a /proc/<pid>/stat line with " + f.length + " fields after the name");
        }
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    /**
     * The share of {@code answers} answers between two readings, with the load clients' own CPU time.
     *
     * @param clientNanos the CPU time of the load clients' threads over the same window
     * @return null when either reading is missing or nothing was answered
     */
    static CpuShare between(Times before, Times after, long clientNanos, long answers) {
        if (before == null || after == null || answers <= 0) {
            return null;
        }
        long busy = after.busy() - before.busy();
        long idle = after.idle() - before.idle();
        long stolen = after.stolen() - before.stolen();
        long all = busy + idle + stolen;
        double process = (after.process() - before.process()) * MICROS_PER_TICK;
        double clients = clientNanos / 1e3;
        // Tick counts are coarse (10 ms): over a short window one part can read a little above the whole.
        double serve = Math.max(0, process - clients);
        double other = Math.max(0, busy * MICROS_PER_TICK - process);
        return new CpuShare(
                serve / answers,
                clients / answers,
                other / answers,
                all > 0 ? idle / (double) all : 0,
                all > 0 ? stolen / (double) all : 0);
    }
}
