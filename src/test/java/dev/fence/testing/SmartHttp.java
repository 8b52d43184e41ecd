package dev.fence.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.opentest4j.TestAbortedException;

/**
 * git's smart HTTP on a free loopback port: {@code git http-backend} run as a CGI program for each
 * request, behind HTTP Basic authentication with one user and password, the way a git host's web server
 * serves repositories. Repositories are the directories under {@code root}; the authenticated user
 * reaches the hooks as {@code REMOTE_USER}. Skips the test (visibly) when git has no {@code http-backend}.
 */
public final class SmartHttp implements AutoCloseable {
    private final Server jetty;
    private final int port;
    private final AtomicInteger unauthorized = new AtomicInteger();
    private final AtomicInteger authorized = new AtomicInteger();

    private SmartHttp(Server jetty, int port) {
        this.jetty = jetty;
        this.port = port;
    }

    /** Serves the repositories under {@code root} to {@code user}:{@code password} only. */
    public static SmartHttp start(Path root, String user, String password) throws Exception {
        Path backend =
                Path.of(GitProcess.run(root, Map.of("PATH", "/usr/bin:/bin"), "--exec-path"), "git-http-backend");
        if (!Files.isExecutable(backend)) {
            throw new TestAbortedException("skipped: this test needs git's http-backend (" + backend + ")");
        }
        Server jetty = new Server();
        ServerConnector connector = new ServerConnector(jetty);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        jetty.addConnector(connector);
        String expected =
                "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
        SmartHttp[] self = new SmartHttp[1];
        jetty.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                if (!expected.equals(request.getHeaders().get(HttpHeader.AUTHORIZATION))) {
                    self[0].unauthorized.incrementAndGet();
                    response.setStatus(401);
                    response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, "Basic realm=\"git\"");
                    response.write(true, ByteBuffer.allocate(0), callback);
                    return true;
                }
                self[0].authorized.incrementAndGet();
                cgi(backend, root, user, request, response, callback);
                return true;
            }
        });
        jetty.start();
        SmartHttp http = new SmartHttp(jetty, connector.getLocalPort());
        self[0] = http;
        return http;
    }

    /** The URL of the repository directory {@code name} under the root. */
    public String url(String name) {
        return "http://127.0.0.1:" + port + "/" + name;
    }

    /** Requests refused for want of the right credentials. */
    public int unauthorized() {
        return unauthorized.get();
    }

    /** Requests served to the authenticated user. */
    public int authorized() {
        return authorized.get();
    }

    @Override
    public void close() throws Exception {
        jetty.stop();
    }

    /** Runs http-backend for one request (RFC 3875): request meta-variables in, headers and body out. */
    private static void cgi(Path backend, Path root, String user, Request request, Response response, Callback callback)
            throws IOException, InterruptedException {
        Map<String, String> env = new HashMap<>();
        env.put("PATH", "/usr/bin:/bin");
        env.put("GIT_PROJECT_ROOT", root.toString());
        env.put("GIT_HTTP_EXPORT_ALL", "1");
        env.put("GATEWAY_INTERFACE", "CGI/1.1");
        env.put("SERVER_PROTOCOL", "HTTP/1.1");
        env.put("REQUEST_METHOD", request.getMethod());
        env.put("PATH_INFO", request.getHttpURI().getPath());
        String query = request.getHttpURI().getQuery();
        env.put("QUERY_STRING", query == null ? "" : query);
        env.put("REMOTE_USER", user);
        env.put("REMOTE_ADDR", "127.0.0.1");
        env.put("AUTH_TYPE", "Basic");
        putHeader(env, "CONTENT_TYPE", request.getHeaders().get(HttpHeader.CONTENT_TYPE));
        putHeader(env, "HTTP_CONTENT_ENCODING", request.getHeaders().get(HttpHeader.CONTENT_ENCODING));
        putHeader(env, "GIT_PROTOCOL", request.getHeaders().get("Git-Protocol"));
        byte[] body = Content.Source.asInputStream(request).readAllBytes();
        if (body.length > 0) {
            env.put("CONTENT_LENGTH", Integer.toString(body.length));
        }
        ProcessBuilder pb = new ProcessBuilder(backend.toString());
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p = pb.start();
        CompletableFuture<byte[]> stderr = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        CompletableFuture<byte[]> stdout = CompletableFuture.supplyAsync(() -> readAll(p.getInputStream()));
        try (var in = p.getOutputStream()) {
            in.write(body);
        }
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        byte[] out = stdout.join();
        stderr.join();
        int end = headerEnd(out);
        String head = new String(out, 0, Math.max(end, 0), StandardCharsets.ISO_8859_1);
        int status = 200;
        for (String line : head.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon <= 0) {
                continue;
            }
            String name = line.substring(0, colon).strip();
            String value = line.substring(colon + 1).strip();
            if (name.equalsIgnoreCase("Status")) {
                status = Integer.parseInt(value.split(" ")[0]);
            } else {
                response.getHeaders().add(name, value);
            }
        }
        response.setStatus(status);
        int start = end < 0 ? 0 : end + (out[end] == '\r' ? 4 : 2);
        response.write(true, ByteBuffer.wrap(out, start, out.length - start), callback);
    }

    /** Where the CGI headers end: the index of the blank line's first byte, or -1. */
    private static int headerEnd(byte[] out) {
        for (int i = 0; i + 1 < out.length; i++) {
            if (out[i] == '\n' && out[i + 1] == '\n') {
                return i;
            }
            if (i + 3 < out.length
                    && out[i] == '\r'
                    && out[i + 1] == '\n'
                    && out[i + 2] == '\r'
                    && out[i + 3] == '\n') {
                return i;
            }
        }
        return -1;
    }

    private static void putHeader(Map<String, String> env, String name, String value) {
        if (value != null) {
            env.put(name, value);
        }
    }

    private static byte[] readAll(InputStream in) {
        try (in;
                ByteArrayOutputStream b = new ByteArrayOutputStream()) {
            in.transferTo(b);
            return b.toByteArray();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
