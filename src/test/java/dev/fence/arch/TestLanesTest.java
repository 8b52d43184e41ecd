package dev.fence.arch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.core.domain.JavaCall;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import dev.fence.testing.ProcessTest;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.commons.annotation.Testable;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The two test lanes: a test that starts a process (git, redis-server, PostgreSQL, a JVM, a script) carries
 * {@link ProcessTest} and runs in {@code mvn verify}, so that {@code mvn test} stays fast. A class counts as
 * starting processes when its code calls {@code ProcessBuilder.start} or {@code Runtime.exec}, or a method of
 * fence's that does, or when it uses a test class that counts (the fixtures in {@code dev.fence.testing}).
 * Paths further down fence's code, such as a command run through {@code Main}, are caught in the fast lane
 * itself, whose JVM refuses to start a process at all.
 */
class TestLanesTest {
    private static final Set<String> STARTS = Set.of(
            "java.lang.ProcessBuilder.start", "java.lang.ProcessBuilder.startPipeline", "java.lang.Runtime.exec");

    private static JavaClasses tests;
    private static Set<String> mainStarters;

    @BeforeAll
    static void importClasses() {
        // Only fence's own classes: the scan needs their calls, not the JDK's or the libraries' classes,
        // and importing those too takes most of a minute on a busy machine.
        ArchConfiguration archUnit = ArchConfiguration.get();
        boolean resolve = archUnit.resolveMissingDependenciesFromClassPath();
        archUnit.setResolveMissingDependenciesFromClassPath(false);
        try {
            tests = new ClassFileImporter().importPath(classesOf(TestLanesTest.class));
            mainStarters = new TreeSet<>();
            for (JavaClass c : new ClassFileImporter().importPath(classesOf(dev.fence.cli.Main.class))) {
                for (JavaCodeUnit u : c.getCodeUnits()) {
                    if (u.getMethodCallsFromSelf().stream().anyMatch(TestLanesTest::starts)) {
                        mainStarters.add(u.getFullName());
                    }
                }
            }
        } finally {
            archUnit.setResolveMissingDependenciesFromClassPath(resolve);
        }
    }

    /** The class directory (or jar) {@code c} was loaded from. */
    private static Path classesOf(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean starts(JavaMethodCall call) {
        return STARTS.contains(call.getTargetOwner().getName() + "." + call.getName());
    }

    private static boolean startsDirectly(JavaClass c) {
        return c.getMethodCallsFromSelf().stream().anyMatch(TestLanesTest::starts);
    }

    /** A call of fence's own code that starts a process itself (not one that may, further down). */
    private static String mainStarterCalled(JavaClass c) {
        for (JavaCall<?> call : c.getCodeUnitCallsFromSelf()) {
            if (mainStarters.contains(call.getTarget().getFullName())) {
                return call.getTarget().getFullName();
            }
        }
        return null;
    }

    /** Test classes that start processes, with the first path to a process for each (for the message). */
    private static Map<String, String> processStarters() {
        Map<String, String> why = new HashMap<>();
        for (JavaClass c : tests) {
            String called = mainStarterCalled(c);
            if (startsDirectly(c) || called != null) {
                why.put(c.getName(), called == null ? "starts a process" : "calls " + called + ", which starts one");
            }
        }
        boolean grew = true;
        while (grew) {
            grew = false;
            for (JavaClass c : tests) {
                if (why.containsKey(c.getName())) {
                    continue;
                }
                for (var d : c.getDirectDependenciesFromSelf()) {
                    String target = d.getTargetClass().getName();
                    if (why.containsKey(target) && !target.equals(c.getName())) {
                        why.put(c.getName(), "uses " + target);
                        grew = true;
                        break;
                    }
                }
            }
        }
        return why;
    }

    /** Classes JUnit runs: concrete, with test methods of their own or inherited, or {@code @Nested}. */
    private static List<JavaClass> testClasses() {
        List<JavaClass> result = new ArrayList<>();
        for (JavaClass c : tests) {
            if (c.getModifiers().contains(JavaModifier.ABSTRACT) || c.isAnonymousClass()) {
                continue;
            }
            Class<?> k = c.reflect();
            if (AnnotationSupport.isAnnotated(k, Nested.class) || hasTests(k)) {
                result.add(c);
            }
        }
        return result;
    }

    private static boolean hasTests(Class<?> k) {
        for (Class<?> t = k; t != null && t != Object.class; t = t.getSuperclass()) {
            for (Method m : t.getDeclaredMethods()) {
                if (AnnotationSupport.isAnnotated(m, Testable.class)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** As JUnit sees it: the tag on the class, a superclass or an enclosing class, directly or meta. */
    private static boolean tagged(JavaClass c) {
        for (Class<?> k = c.reflect(); k != null; k = k.getEnclosingClass()) {
            if (AnnotationSupport.findRepeatableAnnotations(k, Tag.class).stream()
                    .anyMatch(t -> ProcessTest.TAG.equals(t.value()))) {
                return true;
            }
        }
        return false;
    }

    @Test
    void everyTestThatStartsAProcessIsAProcessTest() {
        Map<String, String> starters = processStarters();
        List<String> untagged = new ArrayList<>();
        for (JavaClass c : testClasses()) {
            String reason = starters.get(c.getName());
            if (reason != null && !tagged(c)) {
                untagged.add(c.getName() + " (" + reason + ")");
            }
        }
        assertEquals(
                List.of(),
                untagged,
                "mark these @ProcessTest (dev.fence.testing) so that they run in 'mvn verify', not in the fast lane");
    }

    @Test
    void everyTestClassRunsInOneLane() {
        List<String> lost = new ArrayList<>();
        for (JavaClass c : testClasses()) {
            if (!c.isTopLevelClass()) {
                continue;
            }
            String name = c.getSimpleName();
            if (name.endsWith("IT") ? !tagged(c) : !name.endsWith("Test")) {
                lost.add(c.getName());
            }
        }
        assertEquals(
                List.of(),
                lost,
                "surefire runs untagged *Test classes and failsafe tagged *Test and *IT ones: name these *Test, or "
                        + "mark the *IT ones @ProcessTest, or they run in no lane");
    }

    @Test
    void theScanSeesTheFixtures() {
        Set<String> starters = new HashSet<>(processStarters().keySet());
        for (String fixture : List.of(
                "dev.fence.testing.GitProcess",
                "dev.fence.testing.GitFixture",
                "dev.fence.testing.HookedRepo",
                "dev.fence.testing.RedisServer",
                "dev.fence.testing.PrivateRedis",
                "dev.fence.testing.PostgresServer",
                "dev.fence.testing.SentinelCluster")) {
            assertTrue(starters.contains(fixture), fixture + " is not seen to start processes");
        }
        assertTrue(
                mainStarters.stream().anyMatch(u -> u.startsWith("dev.fence.git.Git.")),
                "fence's code that starts processes: " + mainStarters);
    }
}
