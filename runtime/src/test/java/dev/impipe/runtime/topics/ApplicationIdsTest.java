package dev.impipe.runtime.topics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.app.StreamsDefaults;
import dev.impipe.runtime.config.ImConfig;
import java.util.Map;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

class ApplicationIdsTest {

  @Test
  void generationZeroKeepsTodaysIds() {
    assertThat(ApplicationIds.applicationId("im.", "inbox-store", 0)).isEqualTo("im.inbox-store");
    assertThat(ApplicationIds.applicationId("im.", "notify", 0)).isEqualTo("im.notify");
  }

  @Test
  void aLaterGenerationSuffixesOnlyTheUserKeyedApps() {
    assertThat(ApplicationIds.applicationId("im.", "inbox-store", 1)).isEqualTo("im.inbox-store.g1");
    assertThat(ApplicationIds.applicationId("im.", "ack-timeout", 2)).isEqualTo("im.ack-timeout.g2");
    assertThat(ApplicationIds.applicationId("x.", "notify", 3)).isEqualTo("x.notify.g3");
    // Conversation-keyed or stateless-per-user apps keep their id (their input topics are shared by generations).
    assertThat(ApplicationIds.applicationId("im.", "fanout", 1)).isEqualTo("im.fanout");
    assertThat(ApplicationIds.applicationId("im.", "delay", 1)).isEqualTo("im.delay");
    assertThatThrownBy(() -> ApplicationIds.applicationId("im.", "notify", -1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void namesKnowTheirGeneration() {
    TopicNames base = TopicNames.withPrefix("im.");
    assertThat(base.generation()).isZero();
    assertThat(base.inGeneration(1).generation()).isEqualTo(1);
    assertThat(base.inGeneration(12).generation()).isEqualTo(12);
  }

  @Test
  void theStreamsDefaultsUseTheGenerationsId() {
    ImConfig config = ImConfig.fromEnv(Map.of());
    TopicNames base = TopicNames.withPrefix("im.");
    assertThat(StreamsDefaults.properties(config, base, "inbox-store").get(StreamsConfig.APPLICATION_ID_CONFIG))
        .isEqualTo("im.inbox-store");
    assertThat(StreamsDefaults.properties(config, base.inGeneration(1), "inbox-store")
        .get(StreamsConfig.APPLICATION_ID_CONFIG)).isEqualTo("im.inbox-store.g1");
    assertThat(StreamsDefaults.properties(config, base.inGeneration(1), "fanout")
        .get(StreamsConfig.APPLICATION_ID_CONFIG)).isEqualTo("im.fanout");
  }
}
