package dev.impipe.schemas.compat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The offline FULL gate the build runs at process-classes: the repo's own schemas pass, and an edit incompatible
 * in either direction (new readers of old data, old readers of new data) makes {@link CompatibilityCheck#main}
 * throw, which is what fails {@code ./mvnw verify}.
 */
class CompatibilityCheckTest {

  // Surefire runs with the module directory as working directory.
  private static final Path REPO_CURRENT = Path.of("src/main/avro");
  private static final Path REPO_RELEASED = Path.of("src/main/avro-released");
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path tmp;

  private Path current;
  private Path released;

  @BeforeEach
  void copyTheRepositorysSchemas() throws IOException {
    current = tmp.resolve("avro");
    released = tmp.resolve("avro-released");
    copyTree(REPO_CURRENT, current);
    copyTree(REPO_RELEASED, released);
  }

  @Test
  void theRepositorysSchemasReadEveryReleasedVersion() throws IOException {
    assertThat(REPO_RELEASED.resolve("ChatMessage")).as("released versions are kept in the repo").isDirectory();

    assertThat(CompatibilityCheck.check(REPO_CURRENT, REPO_RELEASED)).isEmpty();
    assertThatCode(() -> CompatibilityCheck.main(new String[] {REPO_CURRENT.toString(), REPO_RELEASED.toString()}))
        .doesNotThrowAnyException();
  }

  @Test
  void addingARequiredFieldWithoutDefaultFailsTheBuild() throws IOException {
    editFields("ChatMessage", fields -> fields.add(field("priority", "\"int\"")));

    List<String> problems = CompatibilityCheck.check(current, released);

    // Today's schema cannot read what v1 or v2 wrote (no priority there)
    assertThat(problems).hasSize(2).allSatisfy(p -> assertThat(p).startsWith("ChatMessage: current")
        .contains("priority")).anySatisfy(p -> assertThat(p).contains("v1.avsc"))
        .anySatisfy(p -> assertThat(p).contains("v2.avsc"));
    assertBuildFails("ChatMessage");
  }

  @Test
  void changingAFieldTypeFailsTheBuild() throws IOException {
    editFields("ChatMessage", fields -> ((ObjectNode) find(fields, "senderId")).put("type", "int"));

    // Avro locates the field by position (senderId is field 5), and names both types; both directions, both versions
    assertThat(CompatibilityCheck.check(current, released)).hasSize(4).allSatisfy(p -> assertThat(p)
        .startsWith("ChatMessage:").contains("/fields/5/type").contains("INT").contains("STRING"));
    assertBuildFails("ChatMessage");
  }

  @Test
  void removingAnEnumSymbolFailsTheBuild() throws IOException {
    editFields("InboxEntry", fields -> {
      ArrayNode symbols = (ArrayNode) find(fields, "type").get("type").get("symbols");
      for (int i = 0; i < symbols.size(); i++) {
        if (symbols.get(i).asText().equals("CONVERSATION_LEFT")) { // a symbol released in v1
          symbols.remove(i);
          break;
        }
      }
    });

    assertThat(CompatibilityCheck.check(current, released)).isNotEmpty().allSatisfy(p -> assertThat(p)
        .startsWith("InboxEntry:").contains("CONVERSATION_LEFT"));
    assertBuildFails("InboxEntry");
  }

  @Test
  void removingAReleasedSchemaFailsTheBuild() throws IOException {
    Files.delete(current.resolve("Ack.avsc"));

    assertThat(CompatibilityCheck.check(current, released)).singleElement().asString()
        .startsWith("Ack:").contains("never removed");
    assertBuildFails("Ack");
  }

  @Test
  void everyIncompatibleRecordIsListedNotJustTheFirst() throws IOException {
    editFields("ChatMessage", fields -> fields.add(field("priority", "\"int\"")));
    editFields("Delivery", fields -> ((ObjectNode) find(fields, "seq")).put("type", "string"));

    assertThat(CompatibilityCheck.check(current, released))
        .anySatisfy(p -> assertThat(p).startsWith("ChatMessage:"))
        .anySatisfy(p -> assertThat(p).startsWith("Delivery:"));
  }

  @Test
  void eachReleasedVersionIsChecked() throws IOException {
    // A second released version whose seq is a string: today's schema (long) cannot read it; v1 still reads.
    ObjectNode v2 = (ObjectNode) JSON.readTree(released.resolve("Ack/v1.avsc").toFile());
    ((ObjectNode) find((ArrayNode) v2.get("fields"), "seq")).put("type", "string");
    Files.writeString(released.resolve("Ack/v2.avsc"), v2.toPrettyString());

    assertThat(CompatibilityCheck.check(current, released)).isNotEmpty()
        .allSatisfy(p -> assertThat(p).startsWith("Ack:").contains("v2.avsc").doesNotContain("v1.avsc"));
  }

  @Test
  void addingAnOptionalFieldWithDefaultPasses() throws IOException {
    editFields("ChatMessage", fields -> fields.add(field("editedAt", "[\"null\", \"long\"]").putNull("default")));
    editFields("ScheduleCommand",
        fields -> fields.add(field("note", "\"string\"").put("default", "")));

    assertThat(CompatibilityCheck.check(current, released)).isEmpty();
    assertThatCode(() -> CompatibilityCheck.main(args())).doesNotThrowAnyException();
  }

  @Test
  void addingASymbolToAnEnumWithDefaultPasses() throws IOException {
    editFields("MembershipChange",
        fields -> ((ArrayNode) find(fields, "op").get("type").get("symbols")).add("BAN"));

    assertThat(CompatibilityCheck.check(current, released)).isEmpty();
  }

  @Test
  void wideningIntToLongFailsBecauseOldReadersCannotReadALong() throws IOException {
    editFields("AckTimeout", fields -> ((ObjectNode) find(fields, "attempts")).put("type", "long"));

    assertThat(CompatibilityCheck.check(current, released)).singleElement().asString()
        .startsWith("AckTimeout: AckTimeout/v1.avsc (readers not upgraded yet)");
  }

  @Test
  void removingARequiredFieldFailsTheBuildBecauseReadersNotUpgradedYetNeedIt() throws IOException {
    // Today's schema could still read old data (it would ignore senderId), but a released reader cannot read new data
    editFields("ChatMessage", fields -> {
      for (int i = 0; i < fields.size(); i++) {
        if (fields.get(i).get("name").asText().equals("senderId")) {
          fields.remove(i);
          break;
        }
      }
    });

    assertThat(CompatibilityCheck.check(current, released)).hasSize(2).allSatisfy(p -> assertThat(p)
        .startsWith("ChatMessage:").contains("readers not upgraded yet").contains("senderId"));
    assertBuildFails("ChatMessage");
  }

  @Test
  void aNewSymbolInAnEnumWithoutDefaultFailsAgainstTheLatestReleasedVersion() throws IOException {
    // ConversationType has no default: a reader of the latest release would fail on CHANNEL
    editFields("ChatMessage",
        fields -> ((ArrayNode) find(fields, "conversationType").get("type").get("symbols")).add("CHANNEL"));

    assertThat(CompatibilityCheck.check(current, released)).singleElement().asString()
        .startsWith("ChatMessage: ChatMessage/v2.avsc (readers not upgraded yet)").contains("CHANNEL");
    assertBuildFails("ChatMessage");
  }

  @Test
  void newSymbolsAreReadAsTheDefaultByTheLatestReleaseAndToleratedOnlyForSupersededVersionsWithoutDefault()
      throws IOException {
    // v1 of InboxEntry had no default (its readers fail on CONVERSATION_MODE: why v2 exists); v2 has UNKNOWN
    editFields("InboxEntry",
        fields -> ((ArrayNode) find(fields, "type").get("type").get("symbols")).add("CONVERSATION_RENAMED"));
    assertThat(CompatibilityCheck.check(current, released)).isEmpty();

    // Without v2 (v1 the latest), the same change fails: nothing is tolerated against the latest release
    try (Stream<Path> v2s = Files.list(released).map(d -> d.resolve("v2.avsc")).filter(Files::exists)) {
      for (Path v2 : v2s.toList()) {
        Files.delete(v2);
      }
    }
    assertThat(CompatibilityCheck.check(current, released))
        .anySatisfy(p -> assertThat(p).startsWith("InboxEntry: InboxEntry/v1.avsc (readers not upgraded yet)"));
  }

  @Test
  void mainRejectsWrongArguments() {
    assertThatThrownBy(() -> CompatibilityCheck.main(new String[] {"only-one"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("usage");
  }

  private String[] args() {
    return new String[] {current.toString(), released.toString()};
  }

  private void assertBuildFails(String record) {
    assertThatThrownBy(() -> CompatibilityCheck.main(args()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not FULL (BACKWARD and FORWARD) compatible")
        .hasMessageContaining(record);
  }

  private void editFields(String record, Consumer<ArrayNode> edit) throws IOException {
    Path file = current.resolve(record + ".avsc");
    ObjectNode schema = (ObjectNode) JSON.readTree(file.toFile());
    edit.accept((ArrayNode) schema.get("fields"));
    Files.writeString(file, schema.toPrettyString());
  }

  private static ObjectNode field(String name, String typeJson) {
    ObjectNode field = JSON.createObjectNode();
    field.put("name", name);
    try {
      field.set("type", JSON.readTree(typeJson));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return field;
  }

  private static com.fasterxml.jackson.databind.JsonNode find(ArrayNode fields, String name) {
    for (var f : fields) {
      if (f.get("name").asText().equals(name)) {
        return f;
      }
    }
    throw new IllegalArgumentException("no field " + name);
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> paths = Files.walk(from)) {
      for (Path p : paths.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }
}
