package dev.impipe.push;

import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.Response;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The browser client: {@code /} is {@code index.html}, {@code /app/<file>} its modules (classpath {@code web/}),
 * {@code /lib/<file>} the JavaScript client library it is built on ({@code clients/js/src}, copied to
 * {@code web/lib/} by the build), {@code /sw.js} its service worker (at the root, so that its scope is the whole
 * page without a {@code Service-Worker-Allowed} header).
 */
final class StaticFiles {

  private static final Pattern NAME = Pattern.compile("[a-z0-9-]{1,64}\\.(js|css|html)");
  private static final Map<String, String> TYPES = Map.of("js", "text/javascript; charset=utf-8",
      "css", "text/css; charset=utf-8", "html", "text/html; charset=utf-8");

  void register(HttpApi http) {
    http.system("GET", "/", r -> file("index.html"));
    http.system("GET", "/sw.js", r -> file("sw.js"));
    http.system("GET", "/app/{file}", r -> file(r.path("file")));
    http.system("GET", "/lib/{file}", r -> file("lib", r.path("file")));
  }

  static Response file(String name) throws IOException {
    return file(null, name);
  }

  private static Response file(String dir, String name) throws IOException {
    if (!NAME.matcher(name).matches()) {
      return Response.json(404, Map.of("error", "no such file"));
    }
    try (InputStream in = StaticFiles.class.getResourceAsStream(
        "/web/" + (dir == null ? "" : dir + "/") + name)) {
      if (in == null) {
        return Response.json(404, Map.of("error", "no such file: " + name));
      }
      String type = TYPES.get(name.substring(name.lastIndexOf('.') + 1));
      return new Response(200, type, in.readAllBytes(), Map.of("Cache-Control", "no-cache"));
    }
  }
}
