package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

/**
 * docs/api/asyncapi.yaml against the code: a channel per topic of the catalogue with its partitions and retention,
 * Avro value schemas equal to schemas/src/main/avro, and a message for every frame type the gateway sends or takes.
 * (Its validity as AsyncAPI is checked with the AsyncAPI parser: notes/api.md.)
 */
class AsyncApiDocumentTest {

  private static final Path DOC = Path.of("..", "docs", "api", "asyncapi.yaml");
  private static final Path AVRO = Path.of("..", "schemas", "src", "main", "avro");
  private static final Path GATEWAY = Path.of("..", "push-gateway", "src", "main", "java");

  private final JsonNode doc = read();

  private static JsonNode read() {
    try {
      return new ObjectMapper(new YAMLFactory()).readTree(DOC.toFile());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void everyTopicOfTheCatalogueIsAChannelWithItsPartitionsAndRetention() {
    // Given the catalogue with the default configuration (prefix im., 12 / 24 partitions)
    Map<String, TopicSpec> catalogue = new HashMap<>();
    for (TopicSpec spec : TopicCatalog.specs(TopicNames.withPrefix("im."), ImConfig.fromEnv(Map.of()))) {
      catalogue.put(spec.name(), spec);
    }
    // Then each Kafka channel is a topic of the catalogue, and each topic has a channel that says what it is
    Set<String> documented = new TreeSet<>();
    doc.path("channels").forEach(channel -> {
      JsonNode kafka = channel.path("bindings").path("kafka");
      if (kafka.isMissingNode()) {
        return;
      }
      String topic = channel.path("address").asText();
      documented.add(topic);
      TopicSpec spec = catalogue.get(topic);
      assertThat(spec).as("channel %s is not a topic of TopicCatalog", topic).isNotNull();
      assertThat(kafka.path("topic").asText()).isEqualTo(topic);
      assertThat(kafka.path("partitions").asInt()).as(topic).isEqualTo(spec.partitions());
      assertThat(kafka.at("/topicConfiguration/retention.ms").asText()).as(topic)
          .isEqualTo(spec.configs().get("retention.ms"));
      assertThat(kafka.at("/topicConfiguration/cleanup.policy/0").asText()).as(topic)
          .isEqualTo(spec.configs().get("cleanup.policy"));
    });
    assertThat(documented).containsExactlyInAnyOrderElementsOf(catalogue.keySet());
  }

  @Test
  void theAvroValueSchemasAreTheOnesTheBuildCompiles() throws IOException {
    try (Stream<Path> files = Files.list(AVRO)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".avsc")).toList()) {
        Schema source = new Schema.Parser().parse(Files.readString(file, StandardCharsets.UTF_8));
        JsonNode documented = doc.at("/components/schemas/" + source.getName());
        assertThat(documented.path("schemaFormat").asText()).as(source.getName())
            .startsWith("application/vnd.apache.avro");
        Schema inDoc = new Schema.Parser().parse(documented.path("schema").toString());
        assertThat(inDoc.toString()).as("%s in asyncapi.yaml differs from %s", source.getName(), file)
            .isEqualTo(source.toString());
      }
    }
  }

  @Test
  void everyFrameTypeTheGatewaySendsOrTakesIsAMessageOfTheDeviceChannel() throws IOException {
    // Given the frame types in the gateway's code: {"type": "x"} it writes, case "x" of the frames it reads
    Set<String> inCode = new TreeSet<>();
    Pattern written = Pattern.compile("put\\(\"type\", \"([a-z]+)\"\\)|\\{\\\\\"type\\\\\":\\\\\"([a-z]+)\\\\\"");
    Pattern read = Pattern.compile("case \"([a-z]+)\" ->");
    try (Stream<Path> files = Files.walk(GATEWAY)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        String source = Files.readString(file, StandardCharsets.UTF_8);
        Matcher w = written.matcher(source);
        while (w.find()) {
          inCode.add(w.group(1) != null ? w.group(1) : w.group(2));
        }
        if (source.contains("path(\"type\")")) {
          Matcher r = read.matcher(source);
          while (r.find()) {
            inCode.add(r.group(1));
          }
        }
      }
    }
    // Then each is a message of /v1/ws whose payload fixes "type" to it
    Set<String> documented = new TreeSet<>();
    doc.at("/channels/device/messages").forEach(m -> {
      String name = m.path("$ref").asText().replace("#/components/messages/", "");
      String payload = doc.at("/components/messages/" + name + "/payload/$ref").asText()
          .replace("#/components/schemas/", "");
      JsonNode schema = doc.at("/components/schemas/" + payload);
      JsonNode type = schema.has("allOf") ? schema.at("/allOf/0/properties/type/const")
          : schema.at("/properties/type/const");
      documented.add(type.asText());
    });
    assertThat(inCode).as("frame types in push-gateway").isNotEmpty();
    assertThat(documented).containsAll(inCode);
  }
}
