package dev.fence.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CpuShareTest {
    @Test
    void theMachineLineSplitsIntoBusyIdleAndStolenAndLeavesGuestTimeOut() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        long[] t = CpuShare.machine("cpu  100 2 30 400 50 0 7 9 1000 1000\ncpu0 1 2 3 4 5 6 7 8 9 10\n");
        assertArrayEquals(new long[] {100 + 2 + 30 + 0 + 7, 400 + 50, 9}, t);
    }

    @Test
    void anOlderKernelsShorterMachineLineIsReadAsFarAsItGoes() {
        assertArrayEquals(new long[] {6, 4, 0}, CpuShare.machine("cpu 1 2 3 4\n"));
    }

    @Test
    void textThatIsNotTheMachineLineIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> CpuShare.machine("intr 1 2 3 4 5\n"));
        assertThrows(IllegalArgumentException.class, () -> CpuShare.machine(""));
    }

    @Test
    void aProcessLinesTimesAreCountedAfterTheLastParenthesisOfItsName() {
        // A command name may hold spaces and parentheses: "(java) (x 1)" would shift a naive split.
        String stat = "4242 (java) (x 1) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 40 0 99 1 2\n";
        assertEquals(1234 + 567, CpuShare.process(stat));
        assertThrows(IllegalArgumentException.class, () -> CpuShare.process("4242 java S 1 2"));
        assertThrows(IllegalArgumentException.class, () -> CpuShare.process("4242 (java) S 1 2 3"));
    }

    @Test
    void perAnswerTheProcessLessItsClientsIsTheServerAndTheRestOfTheBusyMachineIsOtherProcesses() {
        // Over the window: the machine ran 150 ticks (1.5 s of CPU), idled 40 and lost 10 to its host; this
        // process ran 120 ticks, of which its clients' threads took 0.3 s. 1,000 answers.
        var before = new CpuShare.Times(1_000, 5_000, 20, 700);
        var after = new CpuShare.Times(1_150, 5_040, 30, 820);
        CpuShare s = CpuShare.between(before, after, 300_000_000L, 1_000);
        assertNotNull(s);
        assertEquals(900, s.serveMicros(), 1e-9, "1.2 s less 0.3 s, over 1,000 answers");
        assertEquals(300, s.clientMicros(), 1e-9);
        assertEquals(300, s.otherMicros(), 1e-9, "1.5 s busy less this process's 1.2 s");
        assertEquals(0.2, s.idleShare(), 1e-9, "40 of 200 ticks");
        assertEquals(0.05, s.stolenShare(), 1e-9, "10 of 200 ticks");
    }

    @Test
    void coarseTicksNeverMakeAPartNegative() {
        // Clients' exact nanoseconds above the process's 10 ms ticks, a process tick above the machine's.
        var before = new CpuShare.Times(0, 0, 0, 0);
        var after = new CpuShare.Times(1, 1, 0, 2);
        CpuShare s = CpuShare.between(before, after, 25_000_000L, 10);
        assertEquals(0, s.serveMicros());
        assertEquals(0, s.otherMicros());
        assertEquals(2_500, s.clientMicros(), 1e-9);
    }

    @Test
    void withoutEitherReadingOrWithoutAnswersThereIsNoShare() {
        var t = new CpuShare.Times(1, 1, 0, 1);
        assertNull(CpuShare.between(null, t, 0, 10));
        assertNull(CpuShare.between(t, null, 0, 10));
        assertNull(CpuShare.between(t, t, 0, 0));
    }

    @Test
    void timesAreReadFromAProcDirectoryAndAreNullWhereThereIsNone(@TempDir Path dir) throws Exception {
        assertNull(CpuShare.take(dir), "no /proc files");
        Files.writeString(dir.resolve("stat"), "cpu  10 0 5 100 3 0 1 2 0 0\n");
        Files.createDirectories(dir.resolve("self"));
        Files.writeString(dir.resolve("self/stat"), "7 (fence) S 1 7 7 0 -1 0 0 0 0 0 11 4 0 0 20 0 1 0 5 1 1\n");
        assertEquals(new CpuShare.Times(16, 103, 2, 15), CpuShare.take(dir));
    }
}
