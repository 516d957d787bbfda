package dev.impipe.edge.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.edge.http.Json;
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
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code /health} is readiness as a load balancer or Kubernetes needs it: 503 while components are still starting
 * (an empty set of Streams apps is not "all RUNNING"), 200 once every component started and every Streams app is
 * RUNNING, 503 again when an app stops running; {@code /health/live} is 200 throughout. On the real broker.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class HealthIT {

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  void healthIsReadyOnlyWhileEveryComponentStartedAndEveryAppRuns() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("health") + ".";
    Map<String, String> vars = new HashMap<>(TestTokens.env());
    vars.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_HTTP_PORT", "0", "IM_CONVERSATION_PARTITIONS", "1",
        "IM_USER_PARTITIONS", "1"));
    ImConfig config = ImConfig.fromEnv(vars).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl())
        .withHttpPort(0, Files.createTempDirectory("health-it-"));
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    CountDownLatch firstStarted = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicReference<KafkaStreams> app = new AtomicReference<>();
    // Given two components: one that runs a Streams app, and a second one that is slow to start
    PipelineComponent streamsApp = new PipelineComponent() {
      @Override
      public String name() {
        return "reader";
      }

      @Override
      public int order() {
        return 1;
      }

      @Override
      public void start(ComponentContext context) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(names.messages(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray())).foreach((k, v) -> {});
        app.set(context.startStreams("reader", builder.build(), Map.of()));
        firstStarted.countDown();
      }
    };
    PipelineComponent slow = new PipelineComponent() {
      @Override
      public String name() {
        return "slow";
      }

      @Override
      public int order() {
        return 2;
      }

      @Override
      public void start(ComponentContext context) throws Exception {
        release.await(60, TimeUnit.SECONDS);
      }
    };
    try (PipelineRuntime runtime = new PipelineRuntime(config, vars, topics)) {
      CompletableFuture<Void> starting = CompletableFuture.runAsync(() -> {
        try {
          runtime.start(List.of(streamsApp, slow));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      assertThat(firstStarted.await(60, TimeUnit.SECONDS)).isTrue();

      // When the Streams app is RUNNING but the second component has not finished starting
      await().atMost(Duration.ofSeconds(60)).until(() -> app.get().state() == KafkaStreams.State.RUNNING);
      // Then the instance is not ready, but alive
      HttpResponse<String> early = get(runtime, "/health");
      assertThat(early.statusCode()).isEqualTo(503);
      assertThat(Json.MAPPER.readTree(early.body()).get("status").asText()).isEqualTo("STARTING");
      assertThat(get(runtime, "/health/live").statusCode()).isEqualTo(200);

      // When every component has started
      release.countDown();
      starting.get(60, TimeUnit.SECONDS);
      // Then it is ready, naming the app's state
      HttpResponse<String> ready = get(runtime, "/health");
      assertThat(ready.statusCode()).isEqualTo(200);
      JsonNode body = Json.MAPPER.readTree(ready.body());
      assertThat(body.get("status").asText()).isEqualTo("UP");
      assertThat(body.get("streams").get("reader").asText()).isEqualTo("RUNNING");

      // When the app stops running
      app.get().close(Duration.ofSeconds(30));
      // Then the instance is no longer ready, and still alive
      HttpResponse<String> down = get(runtime, "/health");
      assertThat(down.statusCode()).isEqualTo(503);
      assertThat(Json.MAPPER.readTree(down.body()).get("status").asText()).isEqualTo("DOWN");
      assertThat(get(runtime, "/health/live").statusCode()).isEqualTo(200);
    }
  }

  private static HttpResponse<String> get(PipelineRuntime runtime, String path) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + runtime.http().port() + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
