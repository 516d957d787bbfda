package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The owned-mode reader's partitions: what a wish assigns, where each gained partition starts, when it is served. */
class OwnedAssignmentTest {

  private static final String INBOX = "im.inbox";
  private static final String TIMEOUTS = "im.ack-timeouts";

  private final MockConsumer<String, byte[]> consumer = new MockConsumer<>("earliest");
  private final AtomicLongArray seen = new AtomicLongArray(new long[] {-1, -1, -1, -1});
  private final List<Map<Integer, Long>> gained = new ArrayList<>();
  private OwnedAssignment assignment;

  @BeforeEach
  void partitions() {
    // Given inbox partitions 0 (empty), 1 and 2 (500 records each) and a timeout partition 0 ending at 7
    Map<TopicPartition, Long> begin = new HashMap<>();
    Map<TopicPartition, Long> end = new HashMap<>();
    for (int p = 0; p < 4; p++) {
      begin.put(inbox(p), 0L);
      begin.put(timeouts(p), 0L);
      end.put(inbox(p), p == 0 ? 0L : 500L);
      end.put(timeouts(p), 7L);
    }
    consumer.updateBeginningOffsets(begin);
    consumer.updateEndOffsets(end);
    assignment = new OwnedAssignment(consumer, INBOX, TIMEOUTS, seen, gained::add);
  }

  @Test
  void nothingIsReadOrServedBeforeAWish() {
    assertThat(assignment.idle()).isTrue();
    assignment.reassign();
    assertThat(consumer.assignment()).isEmpty();
    assertThat(assignment.reading()).isEmpty();
    assertThat(gained).isEmpty();
  }

  @Test
  void aGainedPartitionIsCaughtUpBeforeItsUsersAreServed() {
    // When the reader is asked for inbox partitions 0 and 1 and timeout partition 0
    assignment.want(new OwnedAssignment.Wish(Set.of(0, 1), Set.of(0)));
    assignment.reassign();

    // Then all three are assigned: the timeouts from their end, inbox 1 a window before its end
    assertThat(assignment.idle()).isFalse();
    assertThat(consumer.assignment()).containsExactlyInAnyOrder(inbox(0), inbox(1), timeouts(0));
    assertThat(consumer.position(timeouts(0))).isEqualTo(7);
    assertThat(consumer.position(inbox(1))).isEqualTo(500 - CatchUp.WINDOW);
    // And the empty partition is served at once, with nothing before it; partition 1 is not yet
    assertThat(assignment.reading()).containsExactly(0);
    assertThat(gained).containsExactly(Map.of(0, -1L));
    assertThat(assignment.route(1, 450)).isFalse();
    assertThat(assignment.route(0, 0)).isTrue();

    // When a poll brings partition 1's reader to its end, its last record having been 450
    consumer.seek(inbox(1), 500);
    assignment.afterPoll();

    // Then it reads on from the end and is served; backlogs of its users wait for offset 450
    assertThat(consumer.position(inbox(1))).isEqualTo(500);
    assertThat(assignment.reading()).containsExactlyInAnyOrder(0, 1);
    assertThat(gained).containsExactly(Map.of(0, -1L), Map.of(1, 450L));
    assertThat(seen.get(1)).isEqualTo(450);
    assertThat(assignment.route(1, 501)).isTrue();
  }

  @Test
  void aWindowWithoutACommittedRecordIsWidenedBackwards() {
    assignment.want(new OwnedAssignment.Wish(Set.of(2), Set.of()));
    assignment.reassign();
    assertThat(consumer.position(inbox(2))).isEqualTo(500 - CatchUp.WINDOW);

    // When the window up to the end held only markers (nothing routed)
    consumer.seek(inbox(2), 500);
    assignment.afterPoll();

    // Then the reader goes further back and the partition is still not served
    assertThat(consumer.position(inbox(2))).isEqualTo(0);
    assertThat(assignment.reading()).isEmpty();
    assertThat(gained).isEmpty();

    // And once it reached the end again with nothing before it, it is served with nothing to wait for
    consumer.seek(inbox(2), 500);
    assignment.afterPoll();
    assertThat(assignment.reading()).containsExactly(2);
    assertThat(gained).containsExactly(Map.of(2, -1L));
    assertThat(seen.get(2)).isEqualTo(-1);
  }

  @Test
  void aKeptPartitionKeepsItsPositionAndALostOneIsForgotten() {
    assignment.want(new OwnedAssignment.Wish(Set.of(0, 1), Set.of(0, 1)));
    assignment.reassign();
    assignment.route(1, 499);
    consumer.seek(inbox(1), 500);
    assignment.afterPoll();
    consumer.seek(inbox(1), 520);
    consumer.seek(timeouts(1), 3);
    seen.set(1, 600);

    // When the wish shrinks to inbox 1 and timeout 1
    assignment.want(new OwnedAssignment.Wish(Set.of(1), Set.of(1)));
    assignment.reassign();

    // Then the kept partitions read on where they were, the lost ones are no longer assigned or served
    assertThat(consumer.assignment()).containsExactlyInAnyOrder(inbox(1), timeouts(1));
    assertThat(consumer.position(inbox(1))).isEqualTo(520);
    assertThat(consumer.position(timeouts(1))).isEqualTo(3);
    assertThat(assignment.reading()).containsExactly(1);
    // And what the reader passed never goes back
    assertThat(seen.get(1)).isEqualTo(600);

    // When the same wish comes again, nothing is reassigned
    consumer.seek(inbox(1), 530);
    assignment.want(new OwnedAssignment.Wish(Set.of(1), Set.of(1)));
    assignment.reassign();
    assertThat(consumer.position(inbox(1))).isEqualTo(530);
  }

  private static TopicPartition inbox(int p) {
    return new TopicPartition(INBOX, p);
  }

  private static TopicPartition timeouts(int p) {
    return new TopicPartition(TIMEOUTS, p);
  }
}
