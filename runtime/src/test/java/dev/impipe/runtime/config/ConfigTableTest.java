package dev.impipe.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ConfigTableTest {

  private static final Setting<Integer> QUEUE = Setting.integer("IM_X_QUEUE", 100, 1, 1_000, "entries per queue");
  private static final Setting<Duration> PING = Setting.duration("IM_X_PING", "20s", "100ms", "10m", "ping interval");
  private static final Setting<String> MODE = Setting.string("IM_X_MODE", "fast", "how to run")
      .validate(m -> m.matches("fast|safe"), "fast or safe");
  private static final Setting<String> TOKEN = Setting.optional("IM_X_TOKEN", "API token").secret();
  private static final ConfigTable TABLE = ConfigTable.of("x", QUEUE, PING, MODE, TOKEN);

  @Test
  void unsetVariablesReadAsTheirDefaults() {
    ConfigValues values = TABLE.read(Map.of());

    assertThat(values.get(QUEUE)).isEqualTo(100);
    assertThat(values.get(PING)).isEqualTo(Duration.ofSeconds(20));
    assertThat(values.get(MODE)).isEqualTo("fast");
    assertThat(values.optional(TOKEN)).isEmpty();
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(delimiter = '|', value = {
      "IM_X_QUEUE | 0    | IM_X_QUEUE=0 is out of range [1, 1000]",
      "IM_X_QUEUE | many | IM_X_QUEUE='many' is not a whole number",
      "IM_X_PING  | 10ms | IM_X_PING=10ms is out of range [100ms, 600000ms]",
      "IM_X_PING  | soon | IM_X_PING='soon' is not a duration",
      "IM_X_MODE  | slow | IM_X_MODE='slow' is invalid: expected fast or safe"})
  void aBadValueNamesTheVariableAndTheValue(String variable, String value, String message) {
    assertThatThrownBy(() -> TABLE.read(Map.of(variable, value)))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageStartingWith(message);
  }

  @Test
  void theLogLineMasksSecretsAndShowsEverythingElse() {
    ConfigValues values = TABLE.read(Map.of("IM_X_TOKEN", "s3cr3t-value", "IM_X_PING", "90000"));

    assertThat(values.describe())
        .isEqualTo("x: IM_X_QUEUE=100, IM_X_PING=90s, IM_X_MODE=fast, IM_X_TOKEN=****")
        .doesNotContain("s3cr3t");
  }

  @Test
  void aBadSecretIsNamedButNotShown() {
    Setting<String> password = Setting.optional("IM_X_PASSWORD", "a password")
        .validate(p -> p.length() >= 8, "at least 8 characters").secret();

    assertThatThrownBy(() -> ConfigTable.of("x", password).read(Map.of("IM_X_PASSWORD", "hunter2")))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessage("IM_X_PASSWORD='****' is invalid: expected at least 8 characters");
  }

  @Test
  void thePipelineLogLineShowsTheEndpointsInUseAndOnlyTheNamesOfKafkaProperties() {
    ImConfig config = ImConfig.fromEnv(Map.of("KAFKA_SASL_JAAS_CONFIG", "... password=\"s3cret\";"))
        .withEndpoints("127.0.0.1:9092", "http://127.0.0.1:8081");

    assertThat(config.describe())
        .startsWith("pipeline: KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:9092, SCHEMA_REGISTRY_URL=http://127.0.0.1:8081, "
            + "KAFKA_*=[sasl.jaas.config], IM_TOPIC_PREFIX=im.")
        .doesNotContain("s3cret");
  }

  @Test
  void aSettingOutsideTheTableIsABug() {
    assertThatThrownBy(() -> TABLE.read(Map.of()).get(Setting.integer("IM_OTHER", 1, 0, 2, "other")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("IM_OTHER");
  }

  @Test
  void aVariableDeclaredTwiceInOneTableIsRefused() {
    assertThatThrownBy(() -> ConfigTable.of("x", QUEUE, Setting.integer("IM_X_QUEUE", 1, 0, 2, "again")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("IM_X_QUEUE");
  }

  @Test
  void readmeBlocksAreRenderedFromTheTablesTheirMarkersName() {
    ConfigTable other = ConfigTable.of("y", Setting.documented("KAFKA_*", "", "passed to clients"));
    String readme = "intro\n<!-- config:x:IM_X_QUEUE -->\nstale\n<!-- /config -->\nmiddle\n"
        + "<!-- config:x y -->\n<!-- /config -->\nend";

    String rendered = ConfigDocs.render(readme, List.of(TABLE, other));

    assertThat(rendered).isEqualTo("intro\n<!-- config:x:IM_X_QUEUE -->\n"
        + "| variable | default | meaning |\n|---|---|---|\n"
        + "| `IM_X_QUEUE` | `100` | entries per queue |\n"
        + "<!-- /config -->\nmiddle\n<!-- config:x y -->\n"
        + "| variable | default | meaning |\n|---|---|---|\n"
        + "| `IM_X_PING` | `20s` | ping interval |\n"
        + "| `IM_X_MODE` | `fast` | how to run |\n"
        + "| `IM_X_TOKEN` | | API token |\n"
        + "| `KAFKA_*` (others) | | passed to clients |\n"
        + "<!-- /config -->\nend");
  }

  @Test
  void aSettingInNoReadmeBlockFailsTheRendering() {
    assertThatThrownBy(() -> ConfigDocs.render("<!-- config:x:IM_X_QUEUE -->\n<!-- /config -->", List.of(TABLE)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("IM_X_PING").hasMessageContaining("x");
  }
}
