package dev.fence.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fence.core.EventType;
import dev.fence.core.FencedWrites;
import dev.fence.core.Grant;
import dev.fence.core.InvalidInputException;
import dev.fence.core.LeaseService;
import dev.fence.core.LeaseStore;
import dev.fence.core.LedgerEvent;
import dev.fence.core.LedgerQuery;
import dev.fence.core.Reason;
import dev.fence.files.SharedFiles.Outcome;
import dev.fence.store.StoreOptions;
import dev.fence.store.Stores;
import dev.fence.testing.FakeClock;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The shared-file compare-and-swap against a real SQLite lease store and real files. */
class SharedFilesTest {
    static final String RESOURCE = "file:docs/plan.md";
    static final Duration TTL = Duration.ofMinutes(5);

    @TempDir
    Path tmp;

    Path root;
    Path file;
    FakeClock clock;
    LeaseStore store;
    LeaseService leases;
    FencedWrites writes;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectories(tmp.resolve("repo"));
        file = Files.createDirectories(root.resolve("docs")).resolve("plan.md");
        Files.writeString(file, "v1\n");
        clock = new FakeClock(Instant.parse("2026-12-01T14:26:10Z"));
        store = Stores.open(
                "sqlite:" + tmp.resolve("store.db"), StoreOptions.defaults().withCallerClock());
        leases = new LeaseService(store, clock);
        writes = new FencedWrites(store, clock);
    }

    @AfterEach
    void close() {
        store.close();
    }

    Grant acquire(String holder) {
        return ((LeaseService.AcquireOutcome.Acquired) leases.acquire(RESOURCE, holder, TTL, null)).grant();
    }

    SharedFiles.Request request(Grant g, Path path, String expected, String content) {
        return new SharedFiles.Request(
                root,
                path,
                root.relativize(path).toString(),
                expected,
                content.getBytes(StandardCharsets.UTF_8),
                RESOURCE,
                g.holder(),
                g.token(),
                g.proof());
    }

    String sha(String s) {
        return SharedFiles.sha256(s.getBytes(StandardCharsets.UTF_8));
    }

    List<LedgerEvent> ledger() {
        return store.query(new LedgerQuery(RESOURCE, null, null, null, null, null, 0));
    }

    @Test
    void writesWhenTheHashIsTheOneReadAndPrintsTheNewOne() throws IOException {
        Grant a = acquire("agent-A");
        SharedFiles.Content read = SharedFiles.read(root, file);
        assertEquals(sha("v1\n"), read.sha256());
        Outcome.Written w = assertInstanceOf(
                Outcome.Written.class, new SharedFiles(writes).write(request(a, file, read.sha256(), "v2\n")));
        assertEquals(sha("v2\n"), w.newSha256());
        assertEquals("v2\n", Files.readString(file));
        assertTrue(ledger().stream().anyMatch(e -> e.type() == EventType.LANDED));
        try (var leftovers = Files.list(file.getParent())) {
            assertTrue(leftovers.noneMatch(p -> p.getFileName().toString().endsWith(".fence-tmp")));
        }
    }

    /** A path goes into the ledger, FENCED messages and the command they tell the agent to run. */
    @Test
    void aPathThatDoesNotPrintAsItselfIsRefusedAndAHintQuotesThePath() throws IOException {
        Grant a = acquire("agent-A");
        for (String name : List.of("notes\n01:11:00  RELEASE x", "notes\u001b[8m", "no\u200btes")) {
            Path odd = file.resolveSibling(name);
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> new SharedFiles(writes)
                    .write(request(a, odd, SharedFiles.MISSING, "x")));
            assertTrue(e.getMessage().contains("control or invisible character"), e.getMessage());
            assertFalse(Files.exists(odd));
        }
        Path shell = file.resolveSibling("notes;touch pwned");
        Files.writeString(shell, "v1\n");
        Outcome.Refused r = assertInstanceOf(
                Outcome.Refused.class, new SharedFiles(writes).write(request(a, shell, sha("v0\n"), "x")));
        assertEquals("fence read --path 'docs/notes;touch pwned'", r.reread());
    }

    @Test
    void aMissingFileIsExpectedAsSixtyFourZeros() throws IOException {
        Grant a = acquire("agent-A");
        Path fresh = file.resolveSibling("new.md");
        assertEquals(SharedFiles.MISSING, SharedFiles.read(root, fresh).sha256());
        assertFalse(SharedFiles.read(root, fresh).exists());
        assertInstanceOf(
                Outcome.Written.class, new SharedFiles(writes).write(request(a, fresh, SharedFiles.MISSING, "x")));
        // Now it exists: expecting it missing again is a changed file.
        Outcome.Refused r = assertInstanceOf(
                Outcome.Refused.class, new SharedFiles(writes).write(request(a, fresh, SharedFiles.MISSING, "y")));
        assertEquals(Reason.FILE_CHANGED, r.fenced().reason());
        assertEquals("x", Files.readString(fresh));
    }

    @Test
    void aHashMismatchIsFencedAsFileChangedAndWritesNothing() throws IOException {
        Grant a = acquire("agent-A");
        String readByA = SharedFiles.read(root, file).sha256();
        Files.writeString(file, "someone else's v2\n");
        Outcome.Refused r = assertInstanceOf(
                Outcome.Refused.class, new SharedFiles(writes).write(request(a, file, readByA, "A's v2\n")));
        assertEquals(Reason.FILE_CHANGED, r.fenced().reason());
        assertEquals("fence read --path docs/plan.md", r.reread());
        assertEquals("someone else's v2\n", Files.readString(file));
        List<String> lines = dev.fence.core.FencedMessage.lines(r.fenced(), r.reread());
        assertTrue(lines.get(0).startsWith("FENCED resource=" + RESOURCE + " ref=- "), lines.get(0));
        assertTrue(lines.get(0).endsWith("reason=file-changed"), lines.get(0));
        assertTrue(String.join("\n", lines).contains("fence read --path docs/plan.md"));
        assertTrue(ledger().stream()
                .anyMatch(e -> e.type() == EventType.REJECT
                        && RESOURCE.equals(e.resource())
                        && "file-changed".equals(e.reason())));
    }

    @Test
    void aStaleTokenIsFencedAndWritesNothing() throws IOException {
        Grant a = acquire("agent-A");
        String readByA = SharedFiles.read(root, file).sha256();
        clock.advance(TTL.plusSeconds(4));
        Grant b = acquire("agent-B");
        Outcome.Refused r = assertInstanceOf(
                Outcome.Refused.class, new SharedFiles(writes).write(request(a, file, readByA, "A's v2\n")));
        assertEquals(Reason.SUPERSEDED, r.fenced().reason());
        assertEquals("v1\n", Files.readString(file));
        // A token number alone is not a credential.
        SharedFiles.Request noProof = new SharedFiles.Request(
                root, file, "docs/plan.md", readByA, new byte[] {1}, RESOURCE, b.holder(), b.token(), null);
        assertEquals(
                Reason.BAD_PROOF,
                assertInstanceOf(Outcome.Refused.class, new SharedFiles(writes).write(noProof))
                        .fenced()
                        .reason());
    }

    @Test
    void ofTwoRacingWritersFromOneHashExactlyOneWins() throws Exception {
        Grant a = acquire("agent-A");
        String read = SharedFiles.read(root, file).sha256();
        // Each writer pauses between its temporary file and the rename, so both are in flight at once.
        SharedFiles slow = new SharedFiles(writes, new SharedFiles.Seam() {
            @Override
            public void beforeRename(Path temp, Path target) {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        CyclicBarrier start = new CyclicBarrier(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Outcome> one = pool.submit(() -> {
                start.await();
                return slow.write(request(a, file, read, "one\n"));
            });
            Future<Outcome> two = pool.submit(() -> {
                start.await();
                return slow.write(request(a, file, read, "two\n"));
            });
            List<Outcome> outcomes = List.of(one.get(30, TimeUnit.SECONDS), two.get(30, TimeUnit.SECONDS));
            assertEquals(
                    1,
                    outcomes.stream().filter(o -> o instanceof Outcome.Written).count(),
                    outcomes.toString());
            Outcome.Refused lost = (Outcome.Refused) outcomes.stream()
                    .filter(o -> o instanceof Outcome.Refused)
                    .findFirst()
                    .orElseThrow();
            assertEquals(Reason.FILE_CHANGED, lost.fenced().reason());
            String content = Files.readString(file);
            assertTrue(content.equals("one\n") || content.equals("two\n"), content);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void pathsOutsideTheRootAreRefusedSymbolicLinksIncluded() throws IOException {
        Grant a = acquire("agent-A");
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path secret = Files.writeString(outside.resolve("secret"), "keep\n");
        String h = sha("keep\n");
        SharedFiles files = new SharedFiles(writes);
        assertThrows(
                InvalidInputException.class, () -> files.write(request(a, root.resolve("../outside/secret"), h, "x")));
        assertThrows(InvalidInputException.class, () -> files.write(request(a, secret, h, "x")));
        // A link to a file outside, and a link to a directory outside.
        Path fileLink = Files.createSymbolicLink(root.resolve("link"), secret);
        assertThrows(InvalidInputException.class, () -> files.write(request(a, fileLink, h, "x")));
        Path dirLink = Files.createSymbolicLink(root.resolve("out"), outside);
        InvalidInputException e = assertThrows(
                InvalidInputException.class, () -> files.write(request(a, dirLink.resolve("secret"), h, "x")));
        assertTrue(e.getMessage().contains("outside the root"), e.getMessage());
        assertThrows(InvalidInputException.class, () -> SharedFiles.read(root, dirLink.resolve("secret")));
        // A link inside the root to a file inside is refused too: the rename would replace the link.
        Path inner = Files.createSymbolicLink(root.resolve("inner"), file);
        assertThrows(InvalidInputException.class, () -> files.write(request(a, inner, sha("v1\n"), "x")));
        assertEquals("keep\n", Files.readString(secret));
        assertEquals("v1\n", Files.readString(file));
        assertThrows(InvalidInputException.class, () -> files.write(request(a, file, "abc", "x")));
    }

    /**
     * A hard link in the root to a file outside it: a read showed the outside file (through fence mcp's
     * read_file too), and a write's compare hashed it. Both are refused; the outside file is untouched.
     */
    @Test
    void aHardLinkToAFileOutsideIsNeitherReadNorWritten() throws IOException {
        Grant a = acquire("agent-A");
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path secret = Files.writeString(outside.resolve("secret"), "keep\n");
        Path link = Files.createLink(root.resolve("docs/hl.md"), secret);
        InvalidInputException r = assertThrows(InvalidInputException.class, () -> SharedFiles.read(root, link));
        assertTrue(r.getMessage().contains("hard link (2 names)"), r.getMessage());
        InvalidInputException w = assertThrows(
                InvalidInputException.class, () -> new SharedFiles(writes).write(request(a, link, sha("keep\n"), "x")));
        assertTrue(w.getMessage().contains("hard link"), w.getMessage());
        assertEquals("keep\n", Files.readString(secret));
        assertEquals("keep\n", Files.readString(link));
    }

    /** A lock file that is a link would be created (and locked) wherever it points. */
    @Test
    void aLockFileThatIsASymbolicLinkIsRefusedAndNothingIsCreatedThroughIt() throws IOException {
        Grant a = acquire("agent-A");
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path victim = outside.resolve("victim");
        Path target = root.resolve("docs/new.md");
        Files.createSymbolicLink(root.resolve("docs/.new.md.fence-lock"), victim);
        SharedFiles files = new SharedFiles(writes);
        InvalidInputException e =
                assertThrows(InvalidInputException.class, () -> files.write(request(a, target, "0".repeat(64), "x")));
        assertTrue(e.getMessage().contains("lock file"), e.getMessage());
        assertFalse(Files.exists(victim, java.nio.file.LinkOption.NOFOLLOW_LINKS), "nothing created outside");
        assertFalse(Files.exists(target));
    }

    /**
     * fence's own lock and temporary files are not shared files: an agent fenced on the file's resource could
     * otherwise rewrite the lock file under a resource of its own, then write the file under that one.
     */
    @Test
    void fencesOwnLockAndTemporaryFilesCannotBeReadOrWritten() throws IOException {
        Grant a = acquire("agent-A");
        SharedFiles files = new SharedFiles(writes);
        assertInstanceOf(Outcome.Written.class, files.write(request(a, file, sha("v1\n"), "v2\n")));
        Path lock = file.resolveSibling(".plan.md.fence-lock");
        assertEquals(RESOURCE, Files.readString(lock));
        Path temp = Files.writeString(file.resolveSibling(".plan.md.k3j9.fence-tmp"), "left by a crash");
        for (Path p :
                List.of(lock, temp, file.resolveSibling(".new.md.fence-lock"), file.resolveSibling(".X.FENCE-LOCK"))) {
            String expected = Files.exists(p) ? sha(Files.readString(p)) : SharedFiles.MISSING;
            InvalidInputException w =
                    assertThrows(InvalidInputException.class, () -> files.write(request(a, p, expected, "sneaky")));
            assertTrue(w.getMessage().contains("fence's own"), w.getMessage());
            InvalidInputException r = assertThrows(InvalidInputException.class, () -> SharedFiles.read(root, p));
            assertTrue(r.getMessage().contains("fence's own"), r.getMessage());
        }
        assertEquals(RESOURCE, Files.readString(lock));
        assertEquals("left by a crash", Files.readString(temp));
        // A file merely named like one, without the leading dot, is an ordinary file.
        Path plain = file.resolveSibling("notes.fence-lock");
        assertInstanceOf(Outcome.Written.class, files.write(request(a, plain, SharedFiles.MISSING, "x")));
        assertEquals("x", new String(SharedFiles.read(root, plain).content(), StandardCharsets.UTF_8));
    }

    /**
     * git's own files are not shared files: whoever writes a repository's {@code config} or {@code hooks/}
     * (or a worktree's {@code .git} file, which names the git directory) chooses a command that the next
     * git run in that clone executes, fence's own {@code git fetch} included.
     */
    @Test
    void filesOfAGitDirectoryCannotBeReadOrWrittenWhateverTheSpelling() throws IOException {
        Grant a = acquire("agent-A");
        SharedFiles files = new SharedFiles(writes);
        Path git = Files.createDirectories(root.resolve(".git"));
        Files.createDirectories(git.resolve("hooks"));
        Files.createDirectories(git.resolve("objects"));
        Files.createDirectories(git.resolve("refs"));
        Files.writeString(git.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(git.resolve("config"), "[core]\n");
        Path bare = Files.createDirectories(root.resolve("mirror.git"));
        Files.createDirectories(bare.resolve("objects"));
        Files.createDirectories(bare.resolve("refs"));
        Files.writeString(bare.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.createDirectories(root.resolve("sub/.GIT"));
        for (Path p : List.of(
                git.resolve("config"),
                git.resolve("hooks/post-checkout"),
                root.resolve("docs/../.git/config"),
                root.resolve("sub/.GIT/config"),
                root.resolve("sub/.git"),
                bare.resolve("config"))) {
            String expected = Files.exists(p) ? sha(Files.readString(p)) : SharedFiles.MISSING;
            InvalidInputException w =
                    assertThrows(InvalidInputException.class, () -> files.write(request(a, p, expected, "[core]\n")));
            assertTrue(w.getMessage().contains("git directory"), p + ": " + w.getMessage());
            if (Files.exists(p)) {
                InvalidInputException r = assertThrows(InvalidInputException.class, () -> SharedFiles.read(root, p));
                assertTrue(r.getMessage().contains("git directory"), r.getMessage());
            }
        }
        assertEquals("[core]\n", Files.readString(git.resolve("config")));
        assertFalse(Files.exists(git.resolve("hooks/post-checkout")));
        // Names that merely contain .git are ordinary files.
        Path ignore = root.resolve(".gitignore");
        assertInstanceOf(Outcome.Written.class, files.write(request(a, ignore, SharedFiles.MISSING, "target/\n")));
        assertInstanceOf(
                Outcome.Written.class, files.write(request(a, root.resolve("docs/git.md"), SharedFiles.MISSING, "x")));
    }

    /** A hard link is a regular file, but truncating and writing it would write the file it shares. */
    @Test
    void aLockFileThatIsAHardLinkIsRefusedAndTheOtherFileIsLeftAlone() throws IOException {
        Grant a = acquire("agent-A");
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        SharedFiles files = new SharedFiles(writes);
        String big = "precious\n".repeat(1000); // over the 4096 bytes a resource name may take
        for (String content : List.of("", big)) {
            Path precious = Files.writeString(outside.resolve("precious"), content);
            Path lock = Files.createLink(root.resolve("docs/.new.md.fence-lock"), precious);
            Path target = root.resolve("docs/new.md");
            InvalidInputException e = assertThrows(
                    InvalidInputException.class, () -> files.write(request(a, target, SharedFiles.MISSING, "x")));
            assertTrue(e.getMessage().contains("hard link"), e.getMessage());
            assertEquals(content, Files.readString(precious));
            assertFalse(Files.exists(target));
            Files.delete(lock);
            Files.delete(precious);
        }
    }

    /** A lock file longer than a resource name is not fence's: it is refused, not read as naming no one. */
    @Test
    void anOversizedLockFileIsRefusedNotAdopted() throws IOException {
        Grant a = acquire("agent-A");
        Path lock = file.resolveSibling(".plan.md.fence-lock");
        String big = "x".repeat(5000);
        Files.writeString(lock, big);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> new SharedFiles(writes)
                .write(request(a, file, sha("v1\n"), "v2\n")));
        assertTrue(e.getMessage().contains("lock file"), e.getMessage());
        assertEquals(big, Files.readString(lock));
        assertEquals("v1\n", Files.readString(file));
    }

    /** A file larger than a Java array can hold is refused by read, not loaded (an OutOfMemoryError). */
    @Test
    void aFileOverTwoGibibytesIsRefusedByRead() throws IOException {
        Path huge = root.resolve("docs/huge.bin");
        try (var f = new java.io.RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength((2L << 30) + 1); // sparse: no disk, no time
        }
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> SharedFiles.read(root, huge));
        assertTrue(e.getMessage().contains("more than the 16 MiB"), e.getMessage());
        assertTrue(e.getMessage().contains("it is " + ((2L << 30) + 1) + " bytes"), e.getMessage());
    }

    /**
     * A write compares the hash of a file larger than read returns without loading it: streamed, the same
     * sha256 as sha256sum prints. (Streaming does not depend on the size; 32 MiB keeps the test fast.)
     */
    @Test
    void aWriteHashesAFileLargerThanReadReturnsByStreamingIt() throws IOException {
        Grant a = acquire("agent-A");
        Path big = root.resolve("docs/big.bin");
        int size = 2 * SharedFiles.MAX_CONTENT;
        try (var f = new java.io.RandomAccessFile(big.toFile(), "rw")) {
            f.setLength(size);
        }
        SharedFiles files = new SharedFiles(writes);
        Outcome.Refused r =
                assertInstanceOf(Outcome.Refused.class, files.write(request(a, big, SharedFiles.MISSING, "x")));
        assertEquals(Reason.FILE_CHANGED, r.fenced().reason());
        String zeros = SharedFiles.sha256(new byte[size]);
        Outcome.Written w = assertInstanceOf(Outcome.Written.class, files.write(request(a, big, zeros, "small")));
        assertEquals(zeros, w.oldSha256());
        assertEquals("small", Files.readString(big));
    }

    /** fence read returns up to 16 MiB, and fence write writes no more than fence read could read back. */
    @Test
    void readsAndWritesUpToSixteenMebibytes() throws IOException {
        Grant a = acquire("agent-A");
        Path edge = root.resolve("docs/edge.bin");
        try (var f = new java.io.RandomAccessFile(edge.toFile(), "rw")) {
            f.setLength(SharedFiles.MAX_CONTENT);
        }
        SharedFiles.Content c = SharedFiles.read(root, edge);
        assertEquals(SharedFiles.MAX_CONTENT, c.content().length);
        assertEquals(SharedFiles.sha256(new byte[SharedFiles.MAX_CONTENT]), c.sha256());
        SharedFiles.Request base = request(a, edge, c.sha256(), "");
        SharedFiles.Request tooBig = new SharedFiles.Request(
                base.root(),
                base.path(),
                base.label(),
                base.expectedSha256(),
                new byte[SharedFiles.MAX_CONTENT + 1],
                base.resource(),
                base.holder(),
                base.token(),
                base.proof());
        InvalidInputException e =
                assertThrows(InvalidInputException.class, () -> new SharedFiles(writes).write(tooBig));
        assertTrue(e.getMessage().contains("more than the 16 MiB"), e.getMessage());
        assertInstanceOf(Outcome.Written.class, new SharedFiles(writes).write(request(a, edge, c.sha256(), "small")));
        assertEquals("small", Files.readString(edge));
    }

    /** A new file is 0644 less the umask, like any tool's; a replaced file keeps its own mode. */
    @Test
    void aNewFileIsReadableByOthersAsTheUmaskAllowsAndAReplacedOneKeepsItsMode() throws IOException {
        Grant a = acquire("agent-A");
        Path reference = Files.createFile(root.resolve("reference")); // 0666 less the umask
        var expected = java.util.EnumSet.copyOf(Files.getPosixFilePermissions(reference));
        expected.retainAll(java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        Path target = root.resolve("docs/new.md");
        SharedFiles files = new SharedFiles(writes);
        assertInstanceOf(Outcome.Written.class, files.write(request(a, target, "0".repeat(64), "one\n")));
        assertEquals(expected, Files.getPosixFilePermissions(target));
        Files.setPosixFilePermissions(target, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw----"));
        assertInstanceOf(Outcome.Written.class, files.write(request(a, target, sha("one\n"), "two\n")));
        assertEquals(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw----"),
                Files.getPosixFilePermissions(target));
    }

    /** An agent fenced on the file's resource takes a lease on another and writes anyway: refused. */
    @Test
    void aFileIsFencedByOneResourceAndAnotherIsRefused() throws IOException {
        Grant a = acquire("agent-A");
        SharedFiles files = new SharedFiles(writes);
        assertInstanceOf(Outcome.Written.class, files.write(request(a, file, sha("v1\n"), "v2\n")));
        Grant other =
                ((LeaseService.AcquireOutcome.Acquired) leases.acquire("files/other", "agent-A", TTL, null)).grant();
        SharedFiles.Request base = request(other, file, sha("v2\n"), "stale\n");
        SharedFiles.Request sneaky = new SharedFiles.Request(
                base.root(),
                base.path(),
                base.label(),
                base.expectedSha256(),
                base.content(),
                "files/other",
                base.holder(),
                base.token(),
                base.proof());
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> files.write(sneaky));
        assertTrue(e.getMessage().contains("fenced by resource " + RESOURCE), e.getMessage());
        assertEquals("v2\n", Files.readString(file));
    }

    /**
     * Renames {@code dir} aside and puts a symbolic link to {@code to} in its place, as a process racing
     * fence would between the check of a path and its use.
     *
     * @return where the directory went
     */
    static Path swapForLink(Path dir, Path to) {
        try {
            Path moved = Files.move(dir, dir.resolveSibling(dir.getFileName() + ".moved"));
            Files.createSymbolicLink(dir, to);
            return moved;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static List<String> names(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /** A directory of the path swapped for a link after the path was confined: not read through. */
    @Test
    void aDirectorySwappedForALinkAfterThePathWasCheckedIsNotReadThrough() throws IOException {
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Files.writeString(outside.resolve("secret.txt"), "outside the root\n");
        Path sub = Files.createDirectories(root.resolve("sub"));
        Files.writeString(sub.resolve("secret.txt"), "inside\n");
        SharedFiles.Seam swap = new SharedFiles.Seam() {
            @Override
            public void afterConfine(Path target) {
                swapForLink(sub, outside);
            }
        };
        InvalidInputException e = assertThrows(
                InvalidInputException.class, () -> SharedFiles.read(root, sub.resolve("secret.txt"), swap));
        assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
        assertTrue(e.getMessage().contains(root.toRealPath().resolve("sub").toString()), e.getMessage());
    }

    /** The same swap before a write: nothing is created outside the root, not even a lock file. */
    @Test
    void aDirectorySwappedForALinkAfterThePathWasCheckedIsNotWrittenThrough() throws IOException {
        Grant a = acquire("agent-A");
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path sub = Files.createDirectories(root.resolve("sub"));
        SharedFiles files = new SharedFiles(writes, new SharedFiles.Seam() {
            @Override
            public void afterConfine(Path target) {
                swapForLink(sub, outside);
            }
        });
        InvalidInputException e = assertThrows(
                InvalidInputException.class,
                () -> files.write(request(a, sub.resolve("evil.sh"), SharedFiles.MISSING, "echo pwned\n")));
        assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
        assertEquals(List.of(), names(outside));
        assertEquals(List.of(), names(root.resolve("sub.moved")));
    }

    /**
     * The swap in the widest window of a write, the store's round trip: the file is neither written
     * outside the root nor reported written, and no temporary file is left.
     */
    @Test
    void aDirectorySwappedForALinkWhileTheStoreJudgesIsNotWrittenThrough() throws IOException {
        Grant a = acquire("agent-A");
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path sub = Files.createDirectories(root.resolve("sub"));
        SharedFiles files = new SharedFiles(writes, new SharedFiles.Seam() {
            @Override
            public void beforeAdmit(Path target) {
                swapForLink(sub, outside);
            }
        });
        InvalidInputException e = assertThrows(
                InvalidInputException.class,
                () -> files.write(request(a, sub.resolve("evil.sh"), SharedFiles.MISSING, "echo pwned\n")));
        assertTrue(e.getMessage().contains("moved or replaced"), e.getMessage());
        assertEquals(List.of(), names(outside));
        // The lock file stays, as after any write; the file and the temporary file do not.
        assertEquals(List.of(".evil.sh.fence-lock"), names(root.resolve("sub.moved")));
        assertTrue(ledger().stream().noneMatch(ev -> ev.type() == EventType.LANDED));
    }

    /**
     * Swapped for a link to the clone's git directory, which the path check refuses by name: its config
     * (core.fsmonitor: a command the next git status runs) is not written.
     */
    @Test
    void aDirectorySwappedForALinkToTheGitDirectoryWhileTheStoreJudgesDoesNotWriteGitsConfig() throws IOException {
        Grant a = acquire("agent-A");
        Path git = gitDirectory(root.resolve(".git"));
        Path sub = Files.createDirectories(root.resolve("sub"));
        SharedFiles files = new SharedFiles(writes, new SharedFiles.Seam() {
            @Override
            public void beforeAdmit(Path target) {
                swapForLink(sub, git);
            }
        });
        Path config = sub.resolve("config");
        InvalidInputException e = assertThrows(
                InvalidInputException.class,
                () -> files.write(request(a, config, SharedFiles.MISSING, "[core]\n\tfsmonitor = touch pwned\n")));
        assertTrue(e.getMessage().contains("moved or replaced"), e.getMessage());
        assertEquals("[core]\n", Files.readString(git.resolve("config")));
        assertEquals(List.of("HEAD", "config", "objects", "refs"), names(git));
    }

    /** A git directory renamed into the path after the check is refused when it is reached. */
    @Test
    void aGitDirectoryRenamedOntoThePathAfterItWasCheckedIsRefused() throws IOException {
        Grant a = acquire("agent-A");
        Path git = gitDirectory(root.resolve(".git"));
        Path sub = Files.createDirectories(root.resolve("sub"));
        SharedFiles files = new SharedFiles(writes, new SharedFiles.Seam() {
            @Override
            public void afterConfine(Path target) {
                try {
                    Files.move(sub, root.resolve("sub.moved"));
                    Files.move(git, sub);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        });
        InvalidInputException e = assertThrows(
                InvalidInputException.class,
                () -> files.write(request(a, sub.resolve("config"), sha("[core]\n"), "[core]\n\tfsmonitor = x\n")));
        assertTrue(e.getMessage().contains("git directory"), e.getMessage());
        assertEquals("[core]\n", Files.readString(sub.resolve("config")));
    }

    static Path gitDirectory(Path git) throws IOException {
        Files.createDirectories(git.resolve("objects"));
        Files.createDirectories(git.resolve("refs"));
        Files.writeString(git.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(git.resolve("config"), "[core]\n");
        return git;
    }
}
