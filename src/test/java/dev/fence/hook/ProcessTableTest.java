package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** ProcessTable agrees with the JDK's own view of this JVM's process, which it reads around. */
class ProcessTableTest {
    @Test
    void thisProcessIsSeenAsTheJdkSeesIt() {
        ProcessHandle me = ProcessHandle.current();
        assertEquals(me.pid(), ProcessTable.self());
        assertEquals(me.parent().map(ProcessHandle::pid).orElse(-1L), ProcessTable.parent(me.pid()));
        assertEquals("java", ProcessTable.command(me.pid()));
        long started = ProcessTable.started(me.pid());
        assertTrue(started > 0, "a running process has a start mark: " + started);
        assertEquals(started, ProcessTable.started(me.pid()), "the mark is stable");
    }

    @Test
    void aProcessThatDoesNotRunHasNoStartNorParent() {
        // Above the kernel's pid_max (at most 2^22): never a running process.
        long none = 1L << 23;
        assertEquals(-1, ProcessTable.started(none));
        assertEquals(-1, ProcessTable.parent(none));
        assertEquals("", ProcessTable.command(none));
    }
}
