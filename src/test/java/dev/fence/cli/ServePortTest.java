package dev.fence.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every address of a {@code fence serve} that the documentation, the examples and the help texts show uses
 * the port {@code fence serve --listen} defaults to, so a reader who starts the server as one place shows
 * and a client as another place shows gets a client that finds it.
 */
class ServePortTest {
    /** An address given to fence serve or to one of its clients: --listen, --server, FENCE_SERVER, server =. */
    private static final Pattern ADDRESS =
            Pattern.compile("(?:--listen[ =]|--server[ =]|FENCE_SERVER=|server = |EXPOSE |\\bserve\", \"--listen\", \")"
                    + "\"?(?:https?://)?[\\w.\\[\\]:-]*?:(\\d+)\\b");

    @Test
    void everyShownServerAddressUsesTheDefaultPort() throws IOException {
        String listen = Cli.commandLine(new Context(
                        new ByteArrayInputStream(new byte[0]),
                        new PrintWriter(new StringWriter()),
                        new PrintWriter(new StringWriter()),
                        Map.of(),
                        Clock.systemUTC(),
                        Path.of("").toAbsolutePath()))
                .getSubcommands()
                .get("serve")
                .getCommandSpec()
                .findOption("--listen")
                .defaultValue();
        String port = listen.substring(listen.lastIndexOf(':') + 1);
        List<Path> files = new ArrayList<>(List.of(
                Path.of("README.md"),
                Path.of("docs/api.md"),
                Path.of("docker/Dockerfile"),
                Path.of("docker/compose.yaml"),
                Path.of("gitlab-config/fence.conf.example"),
                Path.of("hooks/pre-receive-curl.sh")));
        try (Stream<Path> sources = Files.walk(Path.of("src/main/java/dev/fence"))) {
            sources.filter(p -> p.toString().endsWith(".java")).forEach(files::add);
        }
        List<String> others = new ArrayList<>();
        int seen = 0;
        for (Path f : files) {
            Matcher m = ADDRESS.matcher(Files.readString(f));
            while (m.find()) {
                seen++;
                if (!m.group(1).equals(port) && !m.group(1).equals("0")) {
                    others.add(f + ": " + m.group());
                }
            }
        }
        assertTrue(seen > 10, "found only " + seen + " server addresses: the pattern no longer matches");
        assertEquals(List.of(), others, "fence serve listens on " + listen + " by default");
    }
}
