package dev.fence.bench;

/**
 * The JVM floor of {@code fence bench}: a hello-world run as a pre-receive hook, the same way as the
 * Java hook (same JVM options), from a class path holding only this class.
 */
public final class Hello {
    private Hello() {}

    public static void main(String[] args) {
        System.out.println("hello");
    }
}
