package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.runtime.config.InvalidConfigException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LocalLauncherTest {

  @Test
  void everyComponentOnTheClassPathRunsByDefault() {
    assertThat(LocalLauncher.selectComponents(null)).extracting(PipelineComponent::name)
        .containsExactlyInAnyOrder("ingest", "fanout", "inbox-store", "ack-timeout", "delay", "push-gateway", "notify");
  }

  @Test
  void imComponentsPicksTheComponentsOfAnInstance() {
    assertThat(LocalLauncher.selectComponents(" inbox-store, ingest ")).extracting(PipelineComponent::name)
        .containsExactly("inbox-store", "ingest");
  }

  @Test
  void anUnknownComponentIsAnErrorListingTheKnownOnes() {
    assertThatThrownBy(() -> LocalLauncher.selectComponents("fanout,fan-in"))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("IM_COMPONENTS: unknown component 'fan-in'")
        .hasMessageContaining("ack-timeout, delay, fanout, inbox-store, ingest");
  }

  @Test
  void runRefusesToStartWithoutAnExistingBrokerAndRegistry() {
    assertThat(CliRun.of(java.util.Map.of(), "run").usageError())
        .contains("im run: KAFKA_BOOTSTRAP_SERVERS must be set");
    assertThat(CliRun.of(java.util.Map.of("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"), "run").usageError())
        .contains("im run: SCHEMA_REGISTRY_URL must be set");
  }

  @Test
  void helpListsTheSubcommands() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    assertThat(Main.run(new String[] {"--help"}, new PrintStream(out, true, StandardCharsets.UTF_8), System.err))
        .isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("Usage: bin/im [-hV] [COMMAND]", "  local ",
        "  run ", "  produce ", "  tail ", "  token ", "  bench ", "  completion ", "  help ");
  }
}
