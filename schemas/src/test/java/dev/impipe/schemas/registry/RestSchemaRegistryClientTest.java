package dev.impipe.schemas.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import dev.impipe.schemas.serde.SpecificAvroDeserializer;
import dev.impipe.schemas.serde.SpecificAvroSerializer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import org.apache.avro.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The REST client against a stub Confluent-compatible registry on 127.0.0.1 (the real one is tested in an IT). */
class RestSchemaRegistryClientTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration FAST = Duration.ofSeconds(10);

  /** One request as the stub registry saw it. */
  record Seen(String method, String path, String contentType, String body) {}

  /** What the stub answers. */
  record Reply(int status, String body) {}

  private final List<Seen> requests = new CopyOnWriteArrayList<>();
  private final List<String> authorizations = new CopyOnWriteArrayList<>();
  private final CountDownLatch releaseHungRequests = new CountDownLatch(1);
  private volatile Function<Seen, Reply> answer = seen -> new Reply(500, "{\"message\": \"no answer set\"}");
  private HttpServer server;
  private ExecutorService executor;
  private String url;

  @BeforeEach
  void startStubRegistry() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    executor = Executors.newCachedThreadPool();
    server.setExecutor(executor);
    server.createContext("/", this::serve);
    server.start();
    url = "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @AfterEach
  void stopStubRegistry() {
    releaseHungRequests.countDown();
    server.stop(0);
    executor.shutdownNow();
  }

  private void serve(HttpExchange exchange) throws IOException {
    try (exchange) {
      Seen seen = new Seen(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath(),
          exchange.getRequestHeaders().getFirst("Content-Type"),
          new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
      requests.add(seen);
      authorizations.add(String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
      Reply reply = answer.apply(seen);
      byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/vnd.schemaregistry.v1+json");
      exchange.sendResponseHeaders(reply.status(), body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  private static String schemaReply(Schema schema) {
    return JSON.createObjectNode().put("schema", schema.toString()).toString();
  }

  @Test
  void registerPostsTheSchemaUnderTheSubjectInTheRegistryFormat() throws IOException {
    answer = seen -> new Reply(200, "{\"id\": 42}");
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(url);

    int id = client.register("t-value", ChatMessage.getClassSchema());

    assertThat(id).isEqualTo(42);
    assertThat(requests).hasSize(1);
    Seen seen = requests.get(0);
    assertThat(seen.method()).isEqualTo("POST");
    assertThat(seen.path()).isEqualTo("/subjects/t-value/versions");
    assertThat(seen.contentType()).isEqualTo("application/vnd.schemaregistry.v1+json");
    JsonNode body = JSON.readTree(seen.body());
    assertThat(body.size()).as("only the schema field: %s", body).isEqualTo(1);
    assertThat(body.get("schema").isTextual()).as("schema is a JSON string, not an object").isTrue();
    assertThat(new Schema.Parser().parse(body.get("schema").asText())).isEqualTo(ChatMessage.getClassSchema());
  }

  @Test
  void credentialsInTheUrlAreSentAsBasicAuthAndNeverShownInMessages() {
    answer = seen -> new Reply(401, "{\"message\": \"who are you\"}");
    String withCredentials = url.replace("http://", "http://fanout:s%40cret@");
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(withCredentials);

    assertThatThrownBy(() -> client.getById(7)).isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("HTTP 401").hasMessageContaining(url).hasMessageNotContaining("s@cret")
        .hasMessageNotContaining("s%40cret");
    assertThat(authorizations).containsExactly("Basic " + java.util.Base64.getEncoder()
        .encodeToString("fanout:s@cret".getBytes(StandardCharsets.UTF_8)));
    assertThat(requests.get(0).path()).isEqualTo("/schemas/ids/7");
  }

  @Test
  void noCredentialsNoAuthorizationHeader() {
    answer = seen -> new Reply(200, schemaReply(ChatMessage.getClassSchema()));
    new RestSchemaRegistryClient(url).getById(3);
    assertThat(authorizations).containsExactly("null");
  }

  @Test
  void registeredIdIsCachedPerSubjectAndSchema() {
    answer = seen -> new Reply(200, seen.path().contains("inbox") ? "{\"id\": 2}" : "{\"id\": 1}");
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(url);

    assertThat(client.register("t-value", ChatMessage.getClassSchema())).isEqualTo(1);
    assertThat(client.register("t-value", ChatMessage.getClassSchema())).isEqualTo(1);
    assertThat(requests).as("second registration is served from the cache").hasSize(1);

    // Another subject or another schema is a new registration.
    assertThat(client.register("u-value", ChatMessage.getClassSchema())).isEqualTo(1);
    assertThat(client.register("inbox-value", InboxEntry.getClassSchema())).isEqualTo(2);
    assertThat(requests).extracting(Seen::path).containsExactly(
        "/subjects/t-value/versions", "/subjects/u-value/versions", "/subjects/inbox-value/versions");

    // The id of a schema this client registered is known without asking.
    assertThat(client.getById(2)).isEqualTo(InboxEntry.getClassSchema());
    assertThat(requests).hasSize(3);
  }

  @Test
  void getByIdFetchesOnceThenServesFromCache() {
    answer = seen -> new Reply(200, schemaReply(InboxEntry.getClassSchema()));
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(url);

    Schema first = client.getById(7);
    Schema second = client.getById(7);

    assertThat(first).isEqualTo(InboxEntry.getClassSchema());
    assertThat(second).isSameAs(first);
    assertThat(requests).singleElement().satisfies(seen -> {
      assertThat(seen.method()).isEqualTo("GET");
      assertThat(seen.path()).isEqualTo("/schemas/ids/7");
    });
  }

  @Test
  void baseUrlWithAPathPrefixAndTrailingSlashIsHonoured() {
    // Apicurio serves the Confluent API under /apis/ccompat/v7.
    answer = seen -> seen.path().startsWith("/apis/ccompat/v7/subjects/")
        ? new Reply(200, "{\"id\": 5}") : new Reply(404, "{}");
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(url + "/apis/ccompat/v7/");

    assertThat(client.register("t-value", ChatMessage.getClassSchema())).isEqualTo(5);
    assertThat(requests).extracting(Seen::path).containsExactly("/apis/ccompat/v7/subjects/t-value/versions");
    assertThat(client.url()).isEqualTo(url + "/apis/ccompat/v7");
  }

  @Test
  void unknownIdIsAnErrorNamingTheIdAndTheUrl() {
    answer = seen -> new Reply(404, "{\"error_code\": 40403, \"message\": \"Schema not found\"}");
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(url);

    assertThatThrownBy(() -> client.getById(99))
        .isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("id 99")
        .hasMessageContaining(url)
        .hasMessageContaining("not found");
  }

  @Test
  void serverErrorIsAnErrorWithTheStatus() {
    answer = seen -> new Reply(500, "{\"message\": \"storage down\"}");
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(url);

    assertThatThrownBy(() -> client.register("t-value", ChatMessage.getClassSchema()))
        .isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("HTTP 500")
        .hasMessageContaining("storage down")
        .hasMessageContaining("t-value")
        .hasMessageContaining(url);
  }

  @Test
  void incompatibleSchemaRejectionIsReportedWithTheRegistrysReason() {
    answer = seen -> new Reply(409, "{\"error_code\": 409, \"message\": \"Schema being registered is incompatible\"}");
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(url);

    assertThatThrownBy(() -> client.register("t-value", ChatMessage.getClassSchema()))
        .isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("HTTP 409")
        .hasMessageContaining("incompatible");
  }

  @Test
  void failedCallsAreNotCached() {
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(url);
    answer = seen -> new Reply(503, "{}");
    assertThatThrownBy(() -> client.register("t-value", ChatMessage.getClassSchema()))
        .isInstanceOf(SchemaRegistryException.class);

    answer = seen -> new Reply(200, "{\"id\": 3}");
    assertThat(client.register("t-value", ChatMessage.getClassSchema())).isEqualTo(3);
  }

  @Test
  void answersWithoutIdOrSchemaAreErrors() {
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(url);

    answer = seen -> new Reply(200, "{\"version\": 1}");
    assertThatThrownBy(() -> client.register("t-value", ChatMessage.getClassSchema()))
        .isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("without an id");

    answer = seen -> new Reply(200, "not json at all");
    assertThatThrownBy(() -> client.getById(1))
        .isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("unreadable")
        .hasMessageContaining(url);

    answer = seen -> new Reply(200, "{}");
    assertThatThrownBy(() -> client.getById(2))
        .isInstanceOf(SchemaRegistryException.class)
        .hasMessageContaining("no schema for id 2");
  }

  @Test
  void unreachableRegistryFailsFastNamingTheUrl() throws IOException {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = socket.getLocalPort();
    }
    String unreachable = "http://127.0.0.1:" + closedPort;
    RestSchemaRegistryClient client = new RestSchemaRegistryClient(unreachable);

    assertTimeoutPreemptively(FAST, () -> {
      assertThatThrownBy(() -> client.register("t-value", ChatMessage.getClassSchema()))
          .isInstanceOf(SchemaRegistryException.class)
          .hasMessageContaining(unreachable)
          .hasMessageContaining("unreachable");
      assertThatThrownBy(() -> client.getById(1))
          .isInstanceOf(SchemaRegistryException.class)
          .hasMessageContaining(unreachable)
          .hasMessageContaining("schema id 1");
    });
  }

  @Test
  void registryThatNeverAnswersTimesOutInsteadOfHanging() {
    answer = seen -> {
      try {
        releaseHungRequests.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return new Reply(200, "{\"id\": 1}");
    };
    RestSchemaRegistryClient client =
        new RestSchemaRegistryClient(url, Duration.ofSeconds(1), Duration.ofMillis(300));

    assertTimeoutPreemptively(FAST,
        () -> assertThatThrownBy(() -> client.register("t-value", ChatMessage.getClassSchema()))
            .isInstanceOf(SchemaRegistryException.class)
            .hasMessageContaining(url));
  }

  @Test
  void serializerRegistersUnderTopicNameStrategySubjects() {
    answer = seen -> seen.method().equals("POST")
        ? new Reply(200, "{\"id\": 11}") : new Reply(200, schemaReply(ChatMessage.getClassSchema()));
    RestSchemaRegistryClient writerSide = new RestSchemaRegistryClient(url);

    byte[] asValue = new SpecificAvroSerializer<ChatMessage>(writerSide, false).serialize("im.messages",
        chatMessage());
    new SpecificAvroSerializer<ChatMessage>(writerSide, true).serialize("im.messages", chatMessage());
    // A consumer in another process has an empty cache and looks the id up.
    ChatMessage read = new SpecificAvroDeserializer<>(ChatMessage.class, new RestSchemaRegistryClient(url))
        .deserialize("im.messages", asValue);

    assertThat(requests).extracting(Seen::path).containsExactly(
        "/subjects/im.messages-value/versions", "/subjects/im.messages-key/versions", "/schemas/ids/11");
    assertThat(read).isEqualTo(chatMessage());
  }

  @Test
  void forUrlSharesOneClientPerUrlAndMockUrlsStayInMemory() {
    assertThat(SchemaRegistryClients.forUrl(url)).isInstanceOf(RestSchemaRegistryClient.class)
        .isSameAs(SchemaRegistryClients.forUrl(" " + url + " "));
    assertThat(SchemaRegistryClients.forUrl("mock://clients-test")).isInstanceOf(InMemorySchemaRegistry.class)
        .isSameAs(SchemaRegistryClients.forUrl("mock://clients-test"));
    assertThatThrownBy(() -> SchemaRegistryClients.forUrl(" "))
        .isInstanceOf(SchemaRegistryException.class).hasMessageContaining("schema.registry.url");
    InMemorySchemaRegistry.drop("mock://clients-test");
  }

  private static ChatMessage chatMessage() {
    return ChatMessage.newBuilder()
        .setMessageId("m").setClientMsgId("c").setConversationId("conv")
        .setConversationType(dev.impipe.avro.ConversationType.DIRECT).setType(dev.impipe.avro.MessageType.MESSAGE)
        .setSenderId("alice").setSentAt(Instant.ofEpochMilli(1_700_000_000_000L)).build();
  }
}
