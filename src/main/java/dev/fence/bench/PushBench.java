package dev.fence.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Times pushes: for each scenario a bare repository with its own pre-receive hook (or none) and a clone;
 * each push is one new fast-forward commit pushed with the real {@code git} binary, timed from the
 * start of {@code git push} to its exit. Scenarios take turns push by push, so that a change in the
 * machine's load during the run falls on all of them alike, in a new order each round (a fixed seed, so
 * a run can be repeated): in a fixed order each scenario would always follow the same one, and one that
 * follows a push through two JVMs would pay for what that push left behind (caches, a busy core)
 * every time.
 */
final class PushBench {
    /** Sets a scenario up once its repository exists; returns the push options its pushes carry. */
    @FunctionalInterface
    interface Setup {
        List<String> pushOptions(String repoId, Path bare) throws Exception;
    }

    /** One way of pushing. */
    static final class Scenario {
        final String id;
        final String label;
        final String hook;
        final Map<String, String> files;
        final Setup setup;
        Path bare;
        Path clone;
        List<String> options;
        final List<Double> millis = new ArrayList<>();
        String failure;

        Scenario(String id, String label, String hook, Map<String, String> files, Setup setup) {
            this.id = id;
            this.label = label;
            this.hook = hook;
            this.files = files;
            this.setup = setup;
        }
    }

    /** The seed of the push order: any fixed number. */
    private static final long ORDER_SEED = 7;

    private final Path work;
    private final Map<String, String> env;
    private final PrintWriter progress;
    private final List<Scenario> scenarios = new ArrayList<>();

    /**
     * @param work an empty directory for the repositories
     * @param env the environment of every git command (and so of the hooks)
     */
    PushBench(Path work, Map<String, String> env, PrintWriter progress) {
        this.work = work;
        this.env = env;
        this.progress = progress;
    }

    /**
     * Adds a scenario.
     *
     * @param id a short name, also the repository's name (and so the plain-git repo id)
     * @param hook the pre-receive script, or null for none
     * @param files more files to write into the bare repository (name → content)
     */
    void add(String id, String label, String hook, Map<String, String> files, Setup setup) {
        scenarios.add(new Scenario(id, label, hook, files, setup));
    }

    /** Sets every scenario up, then pushes {@code warmup + pushes} rounds, each scenario once a round; returns them by id. */
    Map<String, Scenario> run(int pushes, int warmup) throws IOException {
        for (Scenario s : scenarios) {
            try {
                prepare(s);
            } catch (Exception e) {
                s.failure = "setup failed: " + e.getMessage();
                progress.println("  " + s.id + ": " + s.failure);
            }
        }
        Random order = new Random(ORDER_SEED);
        List<Scenario> turns = new ArrayList<>(scenarios);
        for (int round = 0; round < warmup + pushes; round++) {
            Collections.shuffle(turns, order);
            for (Scenario s : turns) {
                if (s.failure != null) {
                    continue;
                }
                git(s.clone, "commit", "-q", "--allow-empty", "-m", s.id + " " + round);
                List<String> push = new ArrayList<>(List.of("git", "push", "-q"));
                for (String o : s.options) {
                    push.add("-o");
                    push.add(o);
                }
                push.add("origin");
                push.add("main");
                Procs.Outcome o = Procs.run(s.clone, env, push, 60);
                if (o.exit() != 0) {
                    s.failure = "push " + (round + 1) + " failed: " + o.output().trim();
                    progress.println("  " + s.id + ": " + s.failure);
                    continue;
                }
                if (round >= warmup) {
                    s.millis.add(o.nanos() / 1e6);
                }
            }
            progress.print(round + 1 == warmup + pushes ? ".\n" : ".");
            progress.flush();
        }
        Map<String, Scenario> out = new LinkedHashMap<>();
        scenarios.forEach(s -> out.put(s.id, s));
        return out;
    }

    private void prepare(Scenario s) throws Exception {
        s.bare = work.resolve(s.id + ".git");
        s.clone = work.resolve(s.id + "-clone");
        git(work, "init", "-q", "--bare", "--initial-branch=main", s.bare.toString());
        git(s.bare, "config", "receive.advertisePushOptions", "true");
        git(work, "clone", "-q", s.bare.toString(), s.clone.toString());
        git(s.clone, "checkout", "-q", "-b", "main");
        git(s.clone, "commit", "-q", "--allow-empty", "-m", "seed");
        git(s.clone, "push", "-q", "origin", "main");
        for (Map.Entry<String, String> f : s.files.entrySet()) {
            Files.writeString(s.bare.resolve(f.getKey()), f.getValue(), StandardCharsets.UTF_8);
        }
        if (s.hook != null) {
            Path hook = s.bare.resolve("hooks").resolve("pre-receive");
            Files.writeString(hook, s.hook, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        s.options = s.setup.pushOptions(s.id, s.bare);
    }

    private String git(Path dir, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("git"));
        cmd.addAll(List.of(args));
        return Procs.check(dir, env, cmd);
    }
}
