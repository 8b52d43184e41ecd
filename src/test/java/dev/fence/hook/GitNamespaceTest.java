package dev.fence.hook;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Namespaces as git stores them: {@link GitNamespace#split} undoes {@link GitNamespace#prefix}. */
class GitNamespaceTest {
    @Test
    void aStoredRefSplitsIntoItsNamespaceAndTheRefInsideIt() {
        assertArrayEquals(new String[] {"", "refs/heads/main"}, GitNamespace.split("refs/heads/main"));
        assertArrayEquals(
                new String[] {"t1", "refs/heads/main"}, GitNamespace.split("refs/namespaces/t1/refs/heads/main"));
        assertArrayEquals(
                new String[] {"t1/t2", "refs/tags/v1"},
                GitNamespace.split("refs/namespaces/t1/refs/namespaces/t2/refs/tags/v1"));
        // An empty component is not a namespace git would make: the name stays as it is.
        assertArrayEquals(
                new String[] {"", "refs/namespaces//refs/heads/main"},
                GitNamespace.split("refs/namespaces//refs/heads/main"));
        for (String ns : new String[] {"t1", "t1/t2"}) {
            String inner = "refs/heads/x";
            assertEquals(ns, GitNamespace.split(GitNamespace.prefix(ns) + inner)[0]);
            assertEquals(inner, GitNamespace.split(GitNamespace.prefix(ns) + inner)[1]);
        }
    }
}
