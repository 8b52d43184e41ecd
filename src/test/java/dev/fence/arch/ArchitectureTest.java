package dev.fence.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.fence.cli.Main;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Dependencies point inward: the core knows no framework, and nothing below the CLI knows the CLI. */
class ArchitectureTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.fence");
    }

    @Test
    void coreImportsOnlyTheJdk() {
        classes()
                .that()
                .resideInAPackage("dev.fence.core..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("dev.fence.core..", "java..", "javax.crypto..")
                .because("the domain must not import picocli, Jedis, JGit, Jackson, JDBC or HTTP")
                .check(classes);
    }

    @Test
    void coreDoesNotReachOutward() {
        noClasses()
                .that()
                .resideInAPackage("dev.fence.core..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "java.sql..", "java.net.http..", "com.sun.net.httpserver..", "java.lang.ProcessBuilder")
                .check(classes);
    }

    @Test
    void onlyTheProcessEntryTouchesTheProcess() {
        noClasses()
                .that()
                .doNotBelongToAnyOf(dev.fence.hookpath.ProcessEntry.class)
                .should()
                .callMethod(System.class, "exit", int.class)
                .orShould()
                .callMethod(System.class, "getenv")
                .orShould()
                .callMethod(System.class, "getenv", String.class)
                .orShould()
                .accessField(System.class, "in")
                .orShould()
                .callMethod(Runtime.class, "halt", int.class)
                .because("streams, the environment and the clock are passed in (no ambient I/O below the entry)")
                .check(classes);
    }

    @Test
    void onlyTheCliKnowsPicocli() {
        noClasses()
                .that()
                .resideOutsideOfPackage("dev.fence.cli..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("picocli..")
                .check(classes);
    }

    @Test
    void nothingBelowTheCliDependsOnIt() {
        noClasses()
                .that()
                .resideOutsideOfPackage("dev.fence.cli..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.fence.cli..")
                .check(classes);
    }

    @Test
    void storesStayInTheirPackages() {
        noClasses()
                .that()
                .resideOutsideOfPackages("dev.fence.store.redis..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("redis.clients..")
                .check(classes);
        // The fault harness also speaks SQL: it administers the PostgreSQL servers it starts and reads their
        // counters to count the grants a promotion lost; it is a tool beside the product, like the bench. fence
        // migrate speaks SQL to the database it migrates, the thing being written to, never to fence's store.
        // The bench's scale rows seed the stores it made itself in bulk, through their own schema.
        noClasses()
                .that()
                .resideOutsideOfPackages(
                        "dev.fence.store.sqlite..",
                        "dev.fence.store.postgres..",
                        "dev.fence.faults..",
                        "dev.fence.migrate..",
                        "dev.fence.bench..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("java.sql..")
                .check(classes);
        noClasses()
                .that()
                .resideOutsideOfPackages("dev.fence.store.postgres..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.postgresql..")
                .check(classes);
    }

    @Test
    void driversAreReachedByUrlInMigrate() {
        noClasses()
                .that()
                .resideInAPackage("dev.fence.migrate..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.postgresql..", "org.mariadb..", "org.sqlite..")
                .because("fence migrate names drivers by their JDBC URL, so no driver's classes are its API")
                .check(classes);
    }

    @Test
    void noEmbeddedGitClient() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.eclipse.jgit..")
                .because("fence runs the git binary, so ssh, credential helpers, proxies and insteadOf work as"
                        + " for git push")
                .check(classes);
    }

    @Test
    void jacksonOnlyInJson() {
        noClasses()
                .that()
                .resideOutsideOfPackages("dev.fence.json..", "dev.fence.server..", "dev.fence.audit..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("com.fasterxml.jackson..")
                .check(classes);
    }

    @Test
    void jettyOnlyInTheServer() {
        noClasses()
                .that()
                .resideOutsideOfPackage("dev.fence.server")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.eclipse.jetty..")
                .because("fence serve's HTTP server is its own business; its clients speak java.net.http")
                .check(classes);
    }

    @Test
    void theMcpSdkOnlyInTheMcpPackage() {
        noClasses()
                .that()
                .resideOutsideOfPackage("dev.fence.mcp..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.modelcontextprotocol..", "reactor..", "tools.jackson..")
                .because("fence mcp's protocol library (and its Reactor and Jackson 3) is that command's business;"
                        + " the core and every other command stay free of it")
                .check(classes);
    }

    /**
     * No JDK internals anywhere in fence's own classes, whatever their package: such code breaks, often
     * silently, when the JDK changes. Compiled references are ArchUnit's to find; a class named in a string
     * (to load it by reflection) is found in the class files' constant pools.
     */
    @Test
    void noJdkInternals() throws Exception {
        URL main = Main.class.getProtectionDomain().getCodeSource().getLocation();
        JavaClasses all = new ClassFileImporter().importUrl(main);
        assertTrue(all.contain(Main.class), "the scan must cover the main classes");
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("sun..", "jdk.internal..")
                .because("no JDK internals (sun.*, Unsafe, jdk.internal.*): start-up speed is earned by design")
                .check(all);
        // A name in a string constant, as Class.forName would take it ("sun.misc.Unsafe"), not a part of a
        // longer one ("com.sun.net"): the byte before it is a constant pool length or a descriptor's 'L'.
        Pattern internal = Pattern.compile("(?<![a-z0-9_$./])(sun|jdk[./]internal)[./][a-z][A-Za-z0-9_./$]*");
        List<String> found = new ArrayList<>();
        Path root = Path.of(main.toURI());
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                Matcher m = internal.matcher(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1));
                if (m.find()) {
                    found.add(root.relativize(f) + " names " + m.group());
                }
            }
        }
        assertEquals(List.of(), found, "classes naming JDK internals");
    }
}
