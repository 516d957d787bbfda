package dev.impipe.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.RegistrySettings;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.json.PlainJson;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code bin/im tail TOPIC}: one JSON line per record, {@code {"topic", "partition", "offset", "timestamp", "key",
 * "value"}}; read_committed, no consumer group (nothing is committed).
 */
@Command(name = "tail", mixinStandardHelpOptions = true, description = {
    "print one JSON line per record (read_committed), {\"topic\",\"partition\",\"offset\","
        + "\"timestamp\",\"key\",\"value\":{...}}; values that are not Avro are shown as valueBase64 with "
        + "their headers."})
final class TailCommand implements Callable<Integer> {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Parameters(paramLabel = "TOPIC", description = "the topic to read, e.g. im.inbox")
  String topic;

  @Option(names = "--from-beginning", description = "start at the oldest record (default: only new ones)")
  boolean fromBeginning;

  @Option(names = "--max", paramLabel = "N", description = "stop after N records")
  Long max;

  @Option(names = "--timeout", paramLabel = "SECONDS", description = "stop after SECONDS without a new record")
  Long timeoutSeconds;

  private final CliContext context;

  TailCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    long limit = max == null ? Long.MAX_VALUE : positive("--max", max);
    Optional<Duration> idleTimeout = timeoutSeconds == null ? Optional.empty()
        : Optional.of(Duration.ofSeconds(positive("--timeout", timeoutSeconds)));
    return tail(topic, fromBeginning, limit, idleTimeout, context.env(), context.out(), context.err());
  }

  private static int tail(String topic, boolean fromBeginning, long max, Optional<Duration> idleTimeout,
      Map<String, String> env, PrintStream out, PrintStream err) {
    Map.Entry<String, String> endpoints = Endpoints.resolve(env);
    ImTopics topics = new ImTopics(TopicNames.withPrefix(ImConfig.TOPIC_PREFIX.read(env)),
        SchemaRegistryClients.create(endpoints.getValue(), RegistrySettings.fromEnv(env)));
    ProduceCommand.requireTopicExists(env, endpoints.getKey(), topic);
    Optional<Deserializer<? extends SpecificRecord>> valueReader =
        topics.valueType(topic).map(type -> topics.valueSerde(type).deserializer());

    Map<String, Object> props = ProduceCommand.clientProperties(env, endpoints.getKey());
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    long printed = 0;
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
          .map(p -> new TopicPartition(topic, p.partition())).toList();
      consumer.assign(partitions);
      if (fromBeginning) {
        consumer.seekToBeginning(partitions);
      } else {
        consumer.seekToEnd(partitions);
      }
      partitions.forEach(consumer::position);
      long lastRecord = System.nanoTime();
      while (printed < max) {
        var records = consumer.poll(Duration.ofMillis(200));
        if (records.isEmpty()) {
          if (idleTimeout.isPresent() && System.nanoTime() - lastRecord > idleTimeout.get().toNanos()) {
            break;
          }
          continue;
        }
        lastRecord = System.nanoTime();
        for (ConsumerRecord<byte[], byte[]> record : records) {
          out.println(format(record, valueReader, err));
          printed++;
          if (printed >= max) {
            break;
          }
        }
        out.flush();
      }
    }
    return 0;
  }

  static String format(ConsumerRecord<byte[], byte[]> record,
      Optional<Deserializer<? extends SpecificRecord>> valueReader, PrintStream err) {
    ObjectNode line = JSON.createObjectNode();
    line.put("topic", record.topic());
    line.put("partition", record.partition());
    line.put("offset", record.offset());
    line.put("timestamp", record.timestamp());
    line.put("key", record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8));
    if (record.value() == null) {
      line.putNull("value");
    } else if (valueReader.isPresent()) {
      try {
        line.set("value", PlainJson.toJson(valueReader.get().deserialize(record.topic(), record.value())));
      } catch (RuntimeException e) {
        line.putNull("value");
        line.put("error", e.getMessage());
        line.put("valueBase64", Base64.getEncoder().encodeToString(record.value()));
      }
    } else {
      line.put("valueBase64", Base64.getEncoder().encodeToString(record.value()));
    }
    if (record.headers().toArray().length > 0) {
      ObjectNode headers = line.putObject("headers");
      for (Header h : record.headers()) {
        headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
      }
    }
    return line.toString();
  }

  private static long positive(String flag, long value) {
    if (value <= 0) {
      throw new CliException(flag + " must be a positive whole number, got '" + value + "'");
    }
    return value;
  }
}
