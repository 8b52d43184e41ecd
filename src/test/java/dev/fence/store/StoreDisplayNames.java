package dev.fence.store;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.DisplayNameGenerator;

/**
 * Display names for the store contract: every test and nested class of a {@link LeaseStoreContractTest}
 * subclass is named after the store it ran against ("sqlite: acquire…", "redis sentinel: acquire…"), so
 * that reports tell the stores apart although the tests are the same. The store is the outermost test
 * class's name without its {@code ContractTest} or {@code LeaseStoreTest} suffix, in lower case words.
 */
public final class StoreDisplayNames extends DisplayNameGenerator.Standard {
    @Override
    public String generateDisplayNameForNestedClass(List<Class<?>> enclosingInstanceTypes, Class<?> nestedClass) {
        return store(enclosingInstanceTypes.get(0)) + ": "
                + super.generateDisplayNameForNestedClass(enclosingInstanceTypes, nestedClass);
    }

    @Override
    public String generateDisplayNameForMethod(
            List<Class<?>> enclosingInstanceTypes, Class<?> testClass, Method testMethod) {
        Class<?> outermost = enclosingInstanceTypes.isEmpty() ? testClass : enclosingInstanceTypes.get(0);
        return store(outermost) + ": "
                + super.generateDisplayNameForMethod(enclosingInstanceTypes, testClass, testMethod);
    }

    /** {@code RedisSentinelContractTest} → {@code redis sentinel}, {@code SqliteLeaseStoreTest} → {@code sqlite}. */
    static String store(Class<?> testClass) {
        String name = testClass.getSimpleName();
        for (String suffix : List.of("ContractTest", "LeaseStoreTest", "Test")) {
            if (name.endsWith(suffix) && name.length() > suffix.length()) {
                name = name.substring(0, name.length() - suffix.length());
                break;
            }
        }
        return name.replaceAll("(?<=[a-z0-9])(?=[A-Z])", " ").toLowerCase(Locale.ROOT);
    }
}
