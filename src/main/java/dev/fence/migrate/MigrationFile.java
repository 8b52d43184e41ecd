package dev.fence.migrate;

import dev.fence.core.InvalidInputException;
import dev.fence.core.Printable;
import dev.fence.git.JvmCharset;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One migration: a plain SQL file {@code NNNN_name.sql} in the migrations directory. Its version is the
 * number its name starts with: {@code 0042} and {@code 42} are the same version, {@code 0043} is another
 * (renumbering a migration makes a new version, which needs a current token like any change).
 *
 * @param version the version as a number
 * @param label the version as the file name spells it ({@code 0042})
 * @param file the file
 */
public record MigrationFile(long version, String label, Path file) {
    private static final Pattern NAME = Pattern.compile("([0-9]{1,18})_([^/\\\\]+)\\.sql");

    /** The file's name, as messages name it. */
    public String fileName() {
        return file.getFileName().toString();
    }

    /**
     * The migrations of {@code dir}, in version order. Every {@code *.sql} file must be named {@code
     * NNNN_name.sql}, and no two may share a version; other files are ignored.
     *
     * @throws InvalidInputException for a missing directory, a badly named file or a version given twice
     */
    public static List<MigrationFile> scan(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new InvalidInputException("migrations directory " + dir + " does not exist or is not a directory");
        }
        List<MigrationFile> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files.sorted()::iterator) {
                String name = p.getFileName().toString();
                if (!name.endsWith(".sql")) {
                    continue;
                }
                Matcher m = NAME.matcher(name);
                if (!m.matches()) {
                    throw new InvalidInputException("bad migration file name " + Printable.name(p.toString())
                            + ": expected NNNN_name.sql (digits, '_', a name)");
                }
                if (Printable.firstUnprintable(name) >= 0) {
                    // The name goes into the ledger, FENCED messages and migrate's own output.
                    throw new InvalidInputException("bad migration file name " + Printable.name(p.toString())
                            + ": it contains a control or invisible character; name it so that it prints as itself");
                }
                // Read through the directory, not the arguments: the name would go into the ledger as this
                // JVM misread it.
                String misread = JvmCharset.misread(name);
                if (misread != null) {
                    throw new InvalidInputException(
                            "bad migration file name " + Printable.name(p.toString()) + ": " + misread);
                }
                out.add(new MigrationFile(Long.parseLong(m.group(1)), m.group(1), p));
            }
        } catch (IOException e) {
            throw new InvalidInputException("cannot list migrations directory " + dir + ": " + e.getMessage());
        }
        out.sort(Comparator.comparingLong(MigrationFile::version));
        for (int i = 1; i < out.size(); i++) {
            if (out.get(i).version() == out.get(i - 1).version()) {
                throw new InvalidInputException("two migration files have version "
                        + out.get(i).version() + ": " + out.get(i - 1).fileName() + " and "
                        + out.get(i).fileName());
            }
        }
        return List.copyOf(out);
    }

    /**
     * Parses a version given on the command line ({@code 0042}).
     *
     * @throws InvalidInputException unless it is 1 to 18 digits
     */
    public static long parseVersion(String version) {
        if (version == null || !version.matches("[0-9]{1,18}")) {
            throw new InvalidInputException("bad version '" + version
                    + "': expected the digits a migration file name starts with (0042 for 0042_name.sql)");
        }
        return Long.parseLong(version);
    }

    /**
     * The file's statements, as the engine {@code kind} reads them.
     *
     * @throws InvalidInputException when the file cannot be read or is not UTF-8, naming it, or when a
     *     statement is transaction control, SQLite's ATTACH or DETACH, names PostgreSQL's quoting settings,
     *     or names fence's own tables or lock functions (naming its line)
     */
    public List<SqlStatements.Statement> statements(DatabaseUrl.Kind kind) {
        String text;
        try {
            byte[] bytes = Files.readAllBytes(file);
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new InvalidInputException("migration " + file + " is not UTF-8 text");
        } catch (IOException e) {
            throw new InvalidInputException("cannot read migration " + file + ": " + e.getMessage());
        }
        if (text.startsWith("\uFEFF")) {
            text = text.substring(1);
        }
        List<SqlStatements.Statement> statements = SqlStatements.split(text, kind);
        if (statements.isEmpty()) {
            throw new InvalidInputException("migration " + file + " holds no SQL statement");
        }
        for (SqlStatements.Statement s : statements) {
            String control = SqlStatements.transactionControl(s);
            if (control != null) {
                throw new InvalidInputException("line " + s.line() + ": " + control + " is transaction control,"
                        + " which fence migrate refuses: each migration runs in fence's own transaction, which"
                        + " holds the claim on the fence row, and a " + control + " there would end it (what"
                        + " follows would run unfenced, and a failure would roll nothing back). Remove it (a"
                        + " trigger or procedure body ending in END; is not supported either: its ; split it)");
            }
            String attach = SqlStatements.attach(s, kind);
            if (attach != null) {
                throw new InvalidInputException("line " + s.line() + ": " + attach + " opens another database file"
                        + " on fence's connection, which fence migrate refuses (and SQLite is told to refuse too):"
                        + " a migration changes the one database --db names, whose fence row fences it (one"
                        + " database, one resource), and through an attached file it would change a database"
                        + " another resource fences, or read the lease store. Remove it, and migrate that other"
                        + " database with --db naming it, under its own resource");
            }
            String quoting = SqlStatements.quotingSetting(s, kind);
            if (quoting != null) {
                throw new InvalidInputException("line " + s.line() + ": names " + quoting + ", a setting that"
                        + " changes how PostgreSQL and its driver read quotes, which fence migrate refuses: fence"
                        + " splits and screens a migration reading '…' as standard_conforming_strings = on has it"
                        + " (a backslash is a character), and after a change the driver would split a statement"
                        + " fence read as one and run what fence never screened (a COMMIT there would end the"
                        + " transaction that holds the claim). Remove it (a mention in a comment or a string"
                        + " counts too), and write backslashes in E'…' strings");
            }
            String own = SqlStatements.ownName(s);
            if (own != null) {
                throw new InvalidInputException("line " + s.line() + ": names " + own + ", which is fence migrate's"
                        + " own bookkeeping (fence_tokens holds the fence row, schema_migrations who applied what,"
                        + " GET_LOCK/RELEASE_LOCK the lock runners take turns under), which fence migrate refuses:"
                        + " a migration that changed it would undo the fence it runs under. Remove it (a mention in"
                        + " a comment or a string counts too: fence does not parse SQL; name another table)");
            }
        }
        return statements;
    }
}
