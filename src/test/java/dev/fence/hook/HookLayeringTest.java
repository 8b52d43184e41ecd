package dev.fence.hook;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The hook and install packages stay framework-free, and core depends on neither. */
class HookLayeringTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.fence");
    }

    @Test
    void hookAndInstallImportNoFrameworkAndNoCli() {
        noClasses()
                .that()
                .resideInAnyPackage("dev.fence.hook..", "dev.fence.install..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "picocli..",
                        "redis.clients..",
                        "com.fasterxml..",
                        "java.sql..",
                        "org.eclipse.jgit..",
                        "dev.fence.cli..")
                .check(classes);
    }

    @Test
    void coreDependsOnNeitherHookNorInstall() {
        noClasses()
                .that()
                .resideInAPackage("dev.fence.core..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("dev.fence.hook..", "dev.fence.install..")
                .check(classes);
    }

    @Test
    void hookDoesNotDependOnInstall() {
        noClasses()
                .that()
                .resideInAPackage("dev.fence.hook..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.fence.install..")
                .check(classes);
    }
}
