package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code bin/im inbox}: its help lists grow and status; grow refuses bad numbers before touching Kafka. */
class InboxCommandTest {

  @Test
  void helpListsGrowAndStatus() {
    CliRun run = CliRun.of(Map.of(), "inbox", "--help");
    assertThat(run.status()).isZero();
    assertThat(run.out()).contains("grow", "status", "growing-the-inbox.md");
    assertThat(CliRun.of(Map.of(), "--help").out()).contains("inbox");
  }

  @Test
  void growNeedsAPartitionCount() {
    assertThat(CliRun.of(Map.of(), "inbox", "grow").usageError()).contains("--partitions");
  }

  @Test
  void growRefusesNonsenseBeforeConnecting() {
    assertThat(CliRun.of(Map.of(), "inbox", "grow", "--partitions", "0").usageError()).contains("1..10000");
    assertThat(CliRun.of(Map.of(), "inbox", "grow", "--partitions", "8", "--batch", "0").usageError())
        .contains("--batch");
  }
}
