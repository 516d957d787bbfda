package dev.impipe.runtime.domain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.junit.jupiter.api.Test;

class HistoryKeyTest {

  @Test
  void aKeyNamesItsConversationAndSeq() {
    String key = HistoryKey.of("d:alice:bob", 42);
    assertThat(key).isEqualTo("d:alice:bob|42");
    assertThat(HistoryKey.conversation(key)).isEqualTo("d:alice:bob");
    assertThat(HistoryKey.seq(key)).isEqualTo(42L);
  }

  @Test
  void somethingElseIsNotAHistoryKey() {
    for (String bad : new String[] {"g1", "|5", "g1|"}) {
      assertThatThrownBy(() -> HistoryKey.conversation(bad)).as(bad)
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(bad);
    }
  }

  @Test
  void historyIsPartitionedLikeTheMessagesTopicIsByConversationId() {
    // The producer's default partitioner on im.messages' key (the conversation id) and the history partitioner
    // agree for every seq: history partition p holds the conversations of im.messages partition p.
    for (String conversation : new String[] {"g1", "d:alice:bob", "team-42", "x"}) {
      int messagesPartition = BuiltInPartitioner.partitionForKey(conversation.getBytes(StandardCharsets.UTF_8), 12);
      for (long seq : new long[] {0, 1, 999_999}) {
        String key = HistoryKey.of(conversation, seq);
        assertThat(HistoryKey.partition(key, 12)).as(key).isEqualTo(messagesPartition);
        assertThat(HistoryKey.partitions("im.history", key, null, 12))
            .isEqualTo(Optional.of(Set.of(messagesPartition)));
      }
    }
  }
}
