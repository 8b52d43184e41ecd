package dev.fence.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * Marks a test class (or a nested class) that starts processes: {@code git}, {@code redis-server},
 * PostgreSQL, another JVM, a shell script. Such tests run in {@code mvn verify} (failsafe), not in the fast
 * lane of {@code mvn test} (surefire), whose JVM refuses to start any process. Subclasses and nested
 * classes inherit the mark. {@code TestLanesTest} fails for a class that uses a process-starting fixture
 * without it.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Tag(ProcessTest.TAG)
public @interface ProcessTest {
    /** The JUnit tag the build's two lanes select on (see the surefire and failsafe configuration). */
    String TAG = "process";
}
