package dev.impipe.runtime.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.ImConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TopicNamesTest {

  private static final TopicNames BASE = TopicNames.withPrefix("im.");

  @Test
  void generationZeroIsTodaysNames() {
    assertThat(BASE.inGeneration(0)).isEqualTo(BASE);
  }

  @Test
  void aLaterGenerationSuffixesOnlyTheUserKeyedFamily() {
    // Given the default names; When generation 2 is asked for
    TopicNames g2 = BASE.inGeneration(2);

    // Then the inbox and everything co-partitioned with it moves; conversation-keyed topics stay shared
    assertThat(g2).isEqualTo(new TopicNames("im.messages", "im.group-members", "im.inbox.g2", "im.device-cursors.g2",
        "im.deliveries.g2", "im.acks.g2", "im.ack-timeouts.g2", "im.delayed", "im.rejected", "im.history",
        "im.push-registrations.g2", "im.notifications.g2"));
  }

  @Test
  void everyUserKeyedTopicOfTheCatalogIsSuffixed() {
    ImConfig config = ImConfig.fromEnv(Map.of());
    TopicCatalog.specs(BASE.inGeneration(1), config).stream()
        .forEach(spec -> assertThat(spec.name().endsWith(".g1"))
            .as(spec.name()).isEqualTo(TopicCatalog.USER_KEYED.equals(spec.coPartitionGroup())));
  }

  @Test
  void theGenerationSettingDefaultsToZeroAndRefusesNegatives() {
    assertThat(ImConfig.INBOX_GENERATION.read(Map.of())).isZero();
    assertThat(ImConfig.INBOX_GENERATION.read(Map.of(ImConfig.IM_INBOX_GENERATION, "3"))).isEqualTo(3);
    assertThatThrownBy(() -> ImConfig.INBOX_GENERATION.read(Map.of(ImConfig.IM_INBOX_GENERATION, "-1")))
        .hasMessageContaining(ImConfig.IM_INBOX_GENERATION);
    assertThatThrownBy(() -> BASE.inGeneration(-1)).isInstanceOf(IllegalArgumentException.class);
  }
}
