package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.ack.AckTimeoutComponent;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.ingest.IngestComponent;
import dev.impipe.push.client.DeviceClient;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.embedded.BrokerSecurity;
import dev.impipe.embedded.Dirs;
import dev.impipe.embedded.EmbeddedKafka;
import dev.impipe.edge.http.Json;
import dev.impipe.runtime.security.ComponentAcls;
import dev.impipe.runtime.security.ScramPrincipals;
import dev.impipe.testkit.TestTmpDir;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The device path with Kafka security on (what {@code IM_KAFKA_SECURITY=scram} sets up): a broker with SASL/SCRAM and
 * the StandardAuthorizer, every component logged in as its own principal with exactly its {@link ComponentAcls}
 * row, the shared login only allowed to describe topics. A device connects, receives, ACKs over its socket,
 * reconnects: what it ACKed is not pushed again (the gateway's cursor commit to {@code im.device-cursors} is
 * allowed), and the ACKs reached {@code im.acks}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SecuredDevicePathIT {

  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String LAUNCHER = "im-launcher";
  private static final Map<String, String> PASSWORDS = new LinkedHashMap<>();
  private static EmbeddedKafka kafka;
  private static PipelineRuntime runtime;
  private static TopicNames names;
  private static ImTopics topics;
  private static Path state;
  private static DeviceClient.Factory devices;

  @BeforeAll
  static void start() throws Exception {
    kafka = EmbeddedKafka.startSecured(BrokerSecurity.generate());
    String prefix = ItEnvironment.unique("secure-push") + ".";
    names = TopicNames.withPrefix(prefix);
    for (ComponentAcls c : ComponentAcls.table(names)) {
      PASSWORDS.put(c.principalName(), ScramPrincipals.newPassword());
    }
    PASSWORDS.put(LAUNCHER, ScramPrincipals.newPassword());
    Map<String, String> vars = new HashMap<>(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "2",
        "IM_CONVERSATION_PARTITIONS", "2", "IM_ACK_TICK", "200ms", "IM_ACK_TIMEOUT", "30s",
        "KAFKA_SECURITY_PROTOCOL", BrokerSecurity.SECURITY_PROTOCOL, "KAFKA_SASL_MECHANISM", ScramPrincipals.MECHANISM,
        "KAFKA_SASL_JAAS_CONFIG", ScramPrincipals.jaasConfig(LAUNCHER, PASSWORDS.get(LAUNCHER))));
    // As local mode's IM_KAFKA_SECURITY=scram does: each component its own login, nothing shared beyond describe.
    for (ComponentAcls c : ComponentAcls.table(names)) {
      vars.put("IM_" + ImConfig.componentKey(c.component()) + "_KAFKA_SASL_JAAS_CONFIG",
          ScramPrincipals.jaasConfig(c.principalName(), PASSWORDS.get(c.principalName())));
    }
    Map<String, String> env = TestTokens.env(vars);
    ImConfig config = ImConfig.fromEnv(env).withEndpoints(kafka.bootstrapServers(),
        ItEnvironment.get().schemaRegistryUrl());
    try (Admin admin = Admin.create(kafka.adminClientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
      ScramPrincipals.provision(admin, prefix, PASSWORDS);
    }
    topics = new ImTopics(names, new RestSchemaRegistryClient(ItEnvironment.get().schemaRegistryUrl()));
    state = TestTmpDir.newDir("secure-push-it-");
    runtime = new PipelineRuntime(config.withHttpPort(0, state), env, topics);
    runtime.start(List.of(new IngestComponent(), new FanoutComponent(), new InboxStoreComponent(),
        new AckTimeoutComponent(), new PushGatewayComponent()));
    await().atMost(Duration.ofSeconds(120)).until(runtime::healthy);
    devices = DeviceClient.factory();
  }

  @AfterAll
  static void stop() {
    if (devices != null) {
      devices.close();
    }
    if (runtime != null) {
      runtime.close();
    }
    if (kafka != null) {
      kafka.close();
    }
    if (state != null) {
      Dirs.deleteRecursively(state);
    }
  }

  @Test
  void whatADeviceAckedOverItsSocketIsNotPushedAgainAfterItReconnects() throws Exception {
    // Given alice's phone connected, ACKing every entry over its socket
    Device phone = Device.connect(devices, base(), TestTokens.token("alice"), "phone", true);

    // When bob sends her three messages
    for (int i = 1; i <= 3; i++) {
      post("bob", Map.of("to", "alice", "body", "m-" + i, "clientMsgId", "b-" + i));
    }

    // Then the phone receives them, and its ACKs move its cursor (the gateway's commit to im.device-cursors is
    // allowed for im-push-gateway) up to the last one
    await().atMost(Duration.ofSeconds(60)).until(() -> phone.bodies().size() == 3);
    assertThat(phone.bodies()).containsExactly("m-1", "m-2", "m-3");
    long last = phone.seqs().get(phone.seqs().size() - 1);
    await().atMost(Duration.ofSeconds(30)).until(() -> cursor("alice", "phone") >= last);
    assertThat(committedCursor("alice", "phone", last)).isEqualTo(last);

    // When the phone disconnects, one more message arrives meanwhile, and it reconnects
    phone.client.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> phone.closeCode != -1);
    post("bob", Map.of("to", "alice", "body", "m-4", "clientMsgId", "b-4"));
    Device again = Device.connect(devices, base(), TestTokens.token("alice"), "phone", true);

    // Then it receives only the new one: nothing it ACKed is pushed again
    await().atMost(Duration.ofSeconds(60)).until(() -> again.bodies().contains("m-4"));
    await().atMost(Duration.ofSeconds(30)).until(() -> again.entriesAtSynced >= 0);
    assertThat(again.bodies()).containsExactly("m-4");
    assertThat(again.seqs()).allMatch(s -> s > last);
    again.client.close();
  }

  private static URI base() {
    return URI.create("http://127.0.0.1:" + runtime.http().port());
  }

  private static void post(String user, Map<String, String> body) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base() + "/v1/messages"))
        .header("Authorization", TestTokens.bearer(user)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(Json.MAPPER.writeValueAsString(body))).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
  }

  private static long cursor(String user, String device) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base() + "/v1/users/" + user
        + "/devices/" + device + "/cursor")).header("Authorization", TestTokens.bearer(user)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    JsonNode body = Json.MAPPER.readTree(r.body());
    return body.path("seq").asLong(-1);
  }

  /** The highest seq written to {@code im.device-cursors} for the device once it reaches {@code atLeast}. */
  private static long committedCursor(String user, String device, long atLeast) {
    Map<String, Object> props = new HashMap<>(kafka.adminClientProperties());
    props.put("group.id", ItEnvironment.unique("cursor-reader"));
    props.put("auto.offset.reset", "earliest");
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
        new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(names.deviceCursors()));
      List<DeviceCursor> seen = new ArrayList<>();
      await().atMost(Duration.ofSeconds(30)).until(() -> {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.value() != null) {
            DeviceCursor c = topics.deviceCursors().valueSerde().deserializer().deserialize(r.topic(), r.value());
            if (c.getUserId().equals(user) && c.getDeviceId().equals(device)) {
              seen.add(c);
            }
          }
        }
        return seen.stream().anyMatch(c -> c.getSeq() >= atLeast);
      });
      return seen.stream().mapToLong(DeviceCursor::getSeq).max().orElseThrow();
    }
  }
}
