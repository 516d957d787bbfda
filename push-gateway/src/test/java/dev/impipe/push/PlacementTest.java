package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.junit.jupiter.api.Test;

/** Which instance serves a user's devices, and which connections move when the inbox store's tasks move. */
class PlacementTest {

  private static final int PARTITIONS = 6;

  /** A user of each partition, found by the partitioner itself. */
  private static String userOf(int partition) {
    for (int i = 0;; i++) {
      if (Placement.partition("user-" + i, PARTITIONS) == partition) {
        return "user-" + i;
      }
    }
  }

  @Test
  void aUsersPartitionIsTheOneTheProducersDefaultPartitionerPicks() {
    for (String key : List.of("alice", "bob", "#big", "u0", "u11", "ünïcode")) {
      for (int n : List.of(1, 4, 6, 24, 1000)) {
        assertThat(Placement.partition(key, n)).as(key + " of " + n)
            .isEqualTo(BuiltInPartitioner.partitionForKey(key.getBytes(StandardCharsets.UTF_8), n));
      }
    }
  }

  @Test
  void aDeviceIsServedWhereItsPartitionIsLocalRedirectedToItsOwnerOrToldToRetry() {
    // Given this instance owns 0 and 1, another owns 2 to 4, nobody owns 5 (it is moving)
    Placement placement = new Placement(PARTITIONS, Set.of(0, 1), Map.of(2, "h2:8080", 3, "h2:8080",
        4, "h3:8080"));

    // Then a user of 0 is served (also before the reader caught up on 0: told then to read on through the store)
    assertThat(placement.verdict(userOf(0))).isEqualTo(Placement.Verdict.SERVE);
    // And a user of 4 goes to h3, a user of 5 retries, and nothing is known before the partitions are
    assertThat(placement.verdict(userOf(4))).isEqualTo(Placement.Verdict.REDIRECT);
    assertThat(placement.owner(userOf(4))).contains("h3:8080");
    assertThat(placement.verdict(userOf(5))).isEqualTo(Placement.Verdict.RETRY);
    assertThat(placement.owner(userOf(5))).isEmpty();
    assertThat(Placement.UNKNOWN.verdict("anyone")).isEqualTo(Placement.Verdict.RETRY);
  }

  @Test
  void theReaderReadsTheLocalPartitionsAndThoseOfTheTimelinesListenedHere() {
    // Given this instance owns 0 and 1, and its connections listen to a timeline in partition 3
    Placement placement = new Placement(PARTITIONS, Set.of(0, 1), Map.of());
    String timeline = userOf(3).replace("user-", "#g-");
    while (Placement.partition(timeline, PARTITIONS) != 3) {
      timeline = timeline + "x";
    }

    // Then it reads 0, 1 and 3; nothing more while nothing is listened to
    assertThat(placement.inboxPartitions(List.of(timeline))).containsExactly(0, 1, 3);
    assertThat(placement.inboxPartitions(List.of())).containsExactly(0, 1);
    assertThat(Placement.UNKNOWN.inboxPartitions(List.of(timeline))).isEmpty();
  }

  @Test
  void whenAPartitionLeavesOnlyTheConnectionsOfItsUsersMoveToTheNewOwner() {
    // Given users of partitions 0, 1 and 2 connected here, and the next placement without 1 (now h2's) and 2 (moving)
    Placement next = new Placement(PARTITIONS, Set.of(0), Map.of(1, "h2:8080"));
    String a = userOf(0);
    String b = userOf(1);
    String c = userOf(2);

    // Then b goes to h2, c reconnects where it first did (no owner yet), a stays
    assertThat(next.notServed(List.of(a, b, c))).containsExactly(Map.entry(b, "h2:8080"), Map.entry(c, ""));
    // And nothing moves while the placement is not known
    assertThat(Placement.UNKNOWN.notServed(List.of(a, b, c))).isEmpty();
  }
}
