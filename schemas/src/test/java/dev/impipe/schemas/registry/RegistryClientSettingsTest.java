package dev.impipe.schemas.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.impipe.avro.ChatMessage;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Basic auth and TLS of the REST client, configured from the environment, against a JDK HTTP(S) server on
 * 127.0.0.1 (Apicurio in the ITs runs without either): the server checks the Authorization header and answers 401
 * without it; the TLS server has a self-signed certificate for 127.0.0.1 (test resources registry-tls/).
 */
class RegistryClientSettingsTest {

  private static final String PASSWORD = "changeit";

  @TempDir
  Path dir;

  private final List<String> authorizations = new CopyOnWriteArrayList<>();
  private HttpServer server;
  private final java.util.concurrent.ExecutorService executor = java.util.concurrent.Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
    }
    executor.shutdownNow();
  }

  /** The settings as the runtime's {@code RegistrySettings} builds them from these variables (tested there). */
  private static RegistryClientSettings settings(Map<String, String> env) {
    return new RegistryClientSettings(Optional.ofNullable(env.get("SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO")),
        Optional.ofNullable(env.get("SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION")).map(Path::of),
        env.getOrDefault("SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE", "PKCS12"),
        Optional.ofNullable(env.get("SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD")));
  }

  @Test
  void validatesTheSettingsAndKeepsThePasswordOutOfToString() {
    assertThat(settings(Map.of())).isEqualTo(RegistryClientSettings.NONE);
    RegistryClientSettings s = settings(Map.of(
        "SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", "im-fanout:p:w",
        "SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION", "/etc/ca.crt",
        "SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE", "pem"));
    assertThat(s)
        .isEqualTo(new RegistryClientSettings(Optional.of("im-fanout:p:w"), Optional.of(Path.of("/etc/ca.crt")),
            "PEM", Optional.empty()));
    assertThat(s.toString()).contains("im-fanout").doesNotContain("p:w");
    assertThatThrownBy(() -> settings(Map.of("SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", "nocolon")))
        .isInstanceOf(SchemaRegistryException.class).hasMessageContaining("SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO")
        .hasMessageNotContaining("nocolon");
    assertThatThrownBy(() -> settings(Map.of("SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", ":pw")))
        .isInstanceOf(SchemaRegistryException.class);
    assertThatThrownBy(() -> settings(Map.of("SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE", "P12x")))
        .isInstanceOf(SchemaRegistryException.class).hasMessageContaining("SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE");
  }

  @Test
  void basicAuthFromTheEnvironmentIsSentAndReplacesCredentialsInTheUrl() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.setExecutor(executor);
    server.createContext("/", this::registry);
    server.start();
    String url = "http://127.0.0.1:" + server.getAddress().getPort();

    SchemaRegistryClient client = SchemaRegistryClients.create(url,
        settings(Map.of("SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", "im-fanout:s3cret")));
    assertThat(client.register("t-value", ChatMessage.getClassSchema())).isEqualTo(5);
    SchemaRegistryClient overriding = new RestSchemaRegistryClient(url.replace("//", "//old:pw@"),
        settings(Map.of("SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", "im-fanout:s3cret")));
    assertThat(overriding.register("t-value", ChatMessage.getClassSchema())).isEqualTo(5);
    // Without credentials the registry says 401, and the client says so.
    assertThatThrownBy(() -> SchemaRegistryClients.create(url, RegistryClientSettings.NONE)
        .register("t-value", ChatMessage.getClassSchema()))
        .isInstanceOf(SchemaRegistryException.class).hasMessageContaining("HTTP 401");
    String expected =
        "Basic " + Base64.getEncoder().encodeToString("im-fanout:s3cret".getBytes(StandardCharsets.UTF_8));
    assertThat(authorizations).containsExactly(expected, expected, "null");
  }

  @Test
  void anHttpsRegistryIsTrustedThroughTheConfiguredTrustStoreInEachFormat() throws Exception {
    Path keyStore = tls("server.p12");
    Path pem = tls("ca.crt");
    Path trustP12 = tls("trust.p12");
    Path trustJks = tls("trust.jks");

    HttpsServer https = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    https.setHttpsConfigurator(new HttpsConfigurator(serverContext(keyStore)));
    https.setExecutor(executor);
    https.createContext("/", this::registry);
    https.start();
    server = https;
    String url = "https://127.0.0.1:" + https.getAddress().getPort();
    String auth = "im-delay:pw";

    for (Map<String, String> trust : List.of(
        Map.of("SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION", trustP12.toString(),
            "SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD", PASSWORD),
        Map.of("SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION", trustJks.toString(),
            "SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE", "JKS", "SCHEMA_REGISTRY_SSL_TRUSTSTORE_PASSWORD", PASSWORD),
        Map.of("SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION", pem.toString(),
            "SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE", "PEM"))) {
      java.util.HashMap<String, String> env = new java.util.HashMap<>(trust);
      env.put("SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", auth);
      assertThat(SchemaRegistryClients.create(url, settings(env))
          .register("t-value", ChatMessage.getClassSchema())).as("%s", trust).isEqualTo(5);
    }
    // The JVM's default trust does not know the self-signed certificate: a clear error, no request served.
    int served = authorizations.size();
    assertThatThrownBy(() -> SchemaRegistryClients.create(url,
        settings(Map.of("SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO", auth)))
        .register("t-value", ChatMessage.getClassSchema()))
        .isInstanceOf(SchemaRegistryException.class).hasMessageContaining("unreachable");
    assertThat(authorizations).hasSize(served);
  }

  @Test
  void anUnreadableTrustStoreIsAClearError() throws IOException {
    Path empty = Files.writeString(dir.resolve("empty.crt"), "");
    assertThatThrownBy(() -> new RestSchemaRegistryClient("https://127.0.0.1:1", settings(
        Map.of("SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION", empty.toString(),
            "SCHEMA_REGISTRY_SSL_TRUSTSTORE_TYPE", "PEM"))))
        .isInstanceOf(SchemaRegistryException.class).hasMessageContaining("SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION");
    assertThatThrownBy(() -> new RestSchemaRegistryClient("https://127.0.0.1:1", settings(
        Map.of("SCHEMA_REGISTRY_SSL_TRUSTSTORE_LOCATION", dir.resolve("missing.p12").toString()))))
        .isInstanceOf(SchemaRegistryException.class).hasMessageContaining("missing.p12");
  }

  /** A registry that wants basic auth: 401 without it, else id 5 for any registration. */
  private void registry(HttpExchange exchange) throws IOException {
    try (exchange) {
      exchange.getRequestBody().readAllBytes();
      String authorization = exchange.getRequestHeaders().getFirst("Authorization");
      authorizations.add(String.valueOf(authorization));
      boolean ok = authorization != null;
      byte[] body = (ok ? "{\"id\": 5}" : "{\"message\": \"unauthorized\"}").getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(ok ? 200 : 401, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  private static SSLContext serverContext(Path keyStore) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keyStore)) {
      ks.load(in, PASSWORD.toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, PASSWORD.toCharArray());
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(kmf.getKeyManagers(), null, null);
    return context;
  }

  /** Test TLS material made once with keytool (see registry-tls/README.txt). */
  private static Path tls(String name) throws Exception {
    return Path.of(RegistryClientSettingsTest.class.getResource("/registry-tls/" + name).toURI());
  }
}
