package dev.impipe.runtime.topics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.topics.GenerationControl.Phase;
import dev.impipe.runtime.topics.GenerationControl.Switch;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class GenerationControlTest {

  @Test
  void switchRecordsRoundTripAndBadOnesAreSkipped() {
    assertThat(Switch.decode(new Switch(3, Phase.FENCE).encode())).contains(new Switch(3, Phase.FENCE));
    assertThat(Switch.decode("1 LIVE")).contains(new Switch(1, Phase.LIVE));
    assertThat(Switch.decode("x LIVE")).isEmpty();
    assertThat(Switch.decode("0 LIVE")).isEmpty();
    assertThat(Switch.decode("1 SOON")).isEmpty();
    assertThat(Switch.decode(null)).isEqualTo(Optional.empty());
  }

  @Test
  void fenceKeysNameTheirTargetAndTask() {
    assertThat(GenerationControl.fencedTask(GenerationControl.fenceKey(2, 7), 2)).isEqualTo(OptionalInt.of(7));
    assertThat(GenerationControl.fencedTask(GenerationControl.fenceKey(1, 7), 2)).isEmpty();
    assertThat(GenerationControl.fencedTask("fenced.2.x", 2)).isEmpty();
  }

  @Test
  void topicAndInboxNamesFollowThePrefixWhateverTheGeneration() {
    TopicNames names = TopicNames.withPrefix("t9.");
    assertThat(GenerationControl.topic(names)).isEqualTo("t9.inbox-generation");
    assertThat(GenerationControl.inboxOf(names, 1)).isEqualTo("t9.inbox.g1");
    assertThat(GenerationControl.inboxOf(names.inGeneration(1), 2)).isEqualTo("t9.inbox.g2");
    assertThat(GenerationControl.inboxOf(names.inGeneration(3), 0)).isEqualTo("t9.inbox");
  }
}
