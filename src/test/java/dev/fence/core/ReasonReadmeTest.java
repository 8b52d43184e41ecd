package dev.fence.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every {@link Reason} an agent or a script can meet on a FENCED or REJECTED line, or in the ledger, is
 * explained by a row of one of README.md's reason tables ({@code | `code` | meaning |}), so a new reason
 * cannot ship undocumented.
 */
class ReasonReadmeTest {
    @Test
    void everyReasonHasARowInTheReadme() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        List<String> missing = new ArrayList<>();
        for (Reason r : Reason.values()) {
            if (!readme.contains("\n| `" + r.code() + "` | ")) {
                missing.add(r.code());
            }
        }
        assertEquals(List.of(), missing, "reasons with no row in README.md's reason tables");
    }
}
