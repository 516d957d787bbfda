package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.runtime.topics.GenerationControl.Phase;
import dev.impipe.runtime.topics.GenerationControl.Switch;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class GenerationWatchTest {

  private static final String TOPIC = "im.inbox-generation";
  private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
  /**
   * Over a MockConsumer the watch catches up in milliseconds. Short, so a mutant that never catches up fails the test
   * (killed) instead of outlasting PIT's time-out (each time-out costs a minion and ~15 s of a build thread).
   */
  private static final Duration WAIT = Duration.ofSeconds(3);

  private final MockConsumer<String, String> consumer = new MockConsumer<>("earliest");
  private GenerationWatch watch;

  @AfterEach
  void close() throws InterruptedException {
    if (watch != null) {
      watch.close();
    }
  }

  private void topicExists(long endOffset) {
    Node node = new Node(0, "localhost", 9092);
    consumer.updatePartitions(TOPIC, List.of(new PartitionInfo(TOPIC, 0, node, new Node[] {node}, new Node[] {node})));
    consumer.updateBeginningOffsets(Map.of(TP, 0L));
    consumer.updateEndOffsets(Map.of(TP, endOffset));
  }

  private void deliver(long offset, String key, String value) {
    consumer.schedulePollTask(() -> consumer.addRecord(new ConsumerRecord<>(TOPIC, 0, offset, key, value)));
  }

  @Test
  void aMissingTopicMeansNoSwitchAtOnceAndItsFirstSwitchIsSeenOnceItExists() throws Exception {
    // Given no control topic: nothing to catch up with
    watch = new GenerationWatch(consumer, TOPIC, Duration.ofMillis(5));
    assertThat(watch.awaitCaughtUp(WAIT)).isTrue();
    assertThat(watch.get()).isEmpty();

    // When an online grow creates it and asks for a fence
    deliver(0, "switch", new Switch(1, Phase.FENCE).encode());
    topicExists(0);

    // Then the watch reads it
    await().atMost(WAIT).until(() -> watch.get().isPresent());
    assertThat(watch.get()).contains(new Switch(1, Phase.FENCE));
  }

  @Test
  void theNewestSwitchRecordWinsAndFenceRecordsAreNotSwitches() throws Exception {
    // Given a control topic holding a whole switch: fence asked, a task's fence, live
    topicExists(3);
    deliver(0, "switch", new Switch(1, Phase.FENCE).encode());
    deliver(1, "fenced.1.0", "0");
    deliver(2, "switch", new Switch(1, Phase.LIVE).encode());

    watch = new GenerationWatch(consumer, TOPIC, Duration.ofMillis(5));

    // Then it is caught up once it has read all three, and the switch is live
    assertThat(watch.awaitCaughtUp(WAIT)).isTrue();
    assertThat(watch.get()).isEqualTo(Optional.of(new Switch(1, Phase.LIVE)));
  }

  @Test
  void itIsNotCaughtUpBeforeItHasReadToTheEndItFoundAtTheStart() throws Exception {
    // Given a control topic whose two records have not been read yet
    topicExists(2);

    watch = new GenerationWatch(consumer, TOPIC, Duration.ofMillis(5));

    assertThat(watch.awaitCaughtUp(Duration.ofMillis(200))).isFalse();
    assertThat(watch.get()).isEmpty();

    // When they arrive, it is
    deliver(0, "switch", new Switch(2, Phase.FENCE).encode());
    deliver(1, "switch", "garbage");
    assertThat(watch.awaitCaughtUp(WAIT)).isTrue();
    assertThat(watch.get()).contains(new Switch(2, Phase.FENCE)); // an undecodable value changes nothing
  }

  @Test
  void closingStopsTheThreadAndClosesTheConsumer() throws Exception {
    topicExists(0);
    watch = new GenerationWatch(consumer, TOPIC, Duration.ofMillis(5));
    assertThat(watch.awaitCaughtUp(WAIT)).isTrue();

    watch.close();
    watch = null;

    assertThat(consumer.closed()).isTrue();
  }
}
