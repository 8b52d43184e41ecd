package dev.fence.demo;

import java.io.PrintWriter;

/** A one-line progress display on a terminal; nothing otherwise (the story lines are the record). */
public interface Progress {
    /** Shows that the replay is now doing {@code what}. */
    void step(String what);

    /** Clears the display. */
    void done();

    /** No display. */
    static Progress none() {
        return new Progress() {
            @Override
            public void step(String what) {}

            @Override
            public void done() {}
        };
    }

    /** Rewrites one status line on {@code err} (a terminal). */
    static Progress terminal(PrintWriter err) {
        return new Progress() {
            private int n;

            @Override
            public void step(String what) {
                n++;
                String line = "  [" + n + "] " + what;
                err.print("\r\033[2K" + (line.length() > 100 ? line.substring(0, 100) : line));
                err.flush();
            }

            @Override
            public void done() {
                err.print("\r\033[2K");
                err.flush();
            }
        };
    }
}
