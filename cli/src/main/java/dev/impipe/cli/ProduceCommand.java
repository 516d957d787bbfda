package dev.impipe.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.RegistrySettings;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.json.PlainJson;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code bin/im produce TOPIC}: JSON lines {@code {"key": "...", "value": {...}}} from stdin to an Avro topic. A bad
 * line is reported with its number and skipped; the good lines still go out. Exit status 1 if any line was bad.
 */
@Command(name = "produce", mixinStandardHelpOptions = true, description = {
    "read JSON lines {\"key\": \"...\", \"value\": {...}} from stdin and publish them with the "
        + "topic's Avro serde (idempotent, acks=all). A bad line is reported with its number and skipped; exit "
        + "status 1 if any line was bad."})
final class ProduceCommand implements Callable<Integer> {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Parameters(paramLabel = "TOPIC", description = "an Avro topic of the pipeline, e.g. im.messages")
  String topic;

  private final CliContext context;

  ProduceCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() throws IOException {
    Map<String, String> env = context.env();
    Map.Entry<String, String> endpoints = Endpoints.resolve(env);
    ImTopics topics = new ImTopics(TopicNames.withPrefix(ImConfig.TOPIC_PREFIX.read(env)),
        SchemaRegistryClients.create(endpoints.getValue(), RegistrySettings.fromEnv(env)));
    Class<? extends SpecificRecord> type = topics.valueType(topic).orElseThrow(() -> new CliException(
        "unknown topic '" + topic + "': produce writes one of " + String.join(", ", topics.avroTopics())));
    requireTopicExists(env, endpoints.getKey(), topic);
    return produce(topic, type, topics, env, endpoints.getKey(), context.in(), context.err());
  }

  /**
   * Client properties of {@code bin/im produce} / {@code tail}: the {@code KAFKA_*} passthrough (e.g. a SASL login
   * for a secured cluster, docs/security.md) and {@code bootstrap}.
   */
  static Map<String, Object> clientProperties(Map<String, String> env, String bootstrap) {
    Map<String, String> kafkaVariables = new HashMap<>();
    env.forEach((name, value) -> {
      if (name.startsWith("KAFKA_") && !name.equals(ImConfig.KAFKA_BOOTSTRAP_SERVERS) && value != null) {
        kafkaVariables.put(name, value);
      }
    });
    Map<String, Object> props = new HashMap<>(ImConfig.fromEnv(kafkaVariables).kafkaOverrides());
    props.put("bootstrap.servers", bootstrap);
    return props;
  }

  static void requireTopicExists(Map<String, String> env, String bootstrap, String topic) {
    Map<String, Object> props = clientProperties(env, bootstrap);
    props.put("request.timeout.ms", 10_000);
    props.put("default.api.timeout.ms", 15_000);
    try (Admin admin = Admin.create(props)) {
      if (!admin.listTopics().names().get(20, TimeUnit.SECONDS).contains(topic)) {
        throw new CliException("topic '" + topic + "' does not exist on " + bootstrap
            + " (bin/im local creates the pipeline's topics at start-up)");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("interrupted");
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new CliException("cannot reach Kafka at " + bootstrap + ": " + e.getMessage());
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static int produce(String topic, Class<? extends SpecificRecord> type, ImTopics topics,
      Map<String, String> env, String bootstrap, InputStream in, PrintStream err) throws IOException {
    Serde<SpecificRecord> serde = (Serde<SpecificRecord>) topics.valueSerde((Class) type);
    Map<String, Object> props = clientProperties(env, bootstrap);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000);
    props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 15_000);
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    AtomicInteger sent = new AtomicInteger();
    AtomicInteger bad = new AtomicInteger();
    AtomicReference<Exception> sendError = new AtomicReference<>();
    try (KafkaProducer<String, SpecificRecord> producer =
        new KafkaProducer<>(props, new StringSerializer(), serde.serializer());
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      int number = 0;
      while ((line = reader.readLine()) != null) {
        number++;
        if (line.isBlank()) {
          continue;
        }
        ProducerRecord<String, SpecificRecord> record;
        try {
          record = parse(topic, type, line);
        } catch (IllegalArgumentException e) {
          bad.incrementAndGet();
          err.println("line " + number + ": " + e.getMessage());
          continue;
        }
        int lineNumber = number;
        producer.send(record, (meta, e) -> {
          if (e != null) {
            bad.incrementAndGet();
            sendError.compareAndSet(null, e);
            err.println("line " + lineNumber + ": not published: " + e.getMessage());
          } else {
            sent.incrementAndGet();
          }
        });
      }
      producer.flush();
    }
    err.println("produced " + sent.get() + " record(s) to " + topic
        + (bad.get() > 0 ? ", " + bad.get() + " line(s) rejected" : ""));
    return bad.get() > 0 ? 1 : 0;
  }

  static ProducerRecord<String, SpecificRecord> parse(String topic, Class<? extends SpecificRecord> type,
      String line) {
    JsonNode node;
    try {
      node = JSON.readTree(line);
    } catch (IOException e) {
      String message = e instanceof com.fasterxml.jackson.core.JsonProcessingException p ? p.getOriginalMessage()
          : e.getMessage();
      throw new IllegalArgumentException("malformed JSON: " + message);
    }
    if (node == null || !node.isObject()) {
      throw new IllegalArgumentException("expected an object {\"key\": ..., \"value\": {...}}");
    }
    for (String field : List.copyOf(iterable(node))) {
      if (!field.equals("key") && !field.equals("value")) {
        throw new IllegalArgumentException("unexpected field '" + field + "' (only \"key\" and \"value\")");
      }
    }
    JsonNode key = node.get("key");
    if (key != null && !key.isNull() && !key.isTextual()) {
      throw new IllegalArgumentException("\"key\" must be a string");
    }
    JsonNode value = node.get("value");
    if (value == null || !value.isObject()) {
      throw new IllegalArgumentException("\"value\" must be an object with the fields of " + type.getSimpleName());
    }
    SpecificRecord record = PlainJson.fromJson(value, type);
    return new ProducerRecord<>(topic, key == null || key.isNull() ? null : key.asText(), record);
  }

  private static List<String> iterable(JsonNode node) {
    List<String> names = new java.util.ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }
}
