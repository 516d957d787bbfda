package dev.impipe.cli.grow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.junit.jupiter.api.Test;

class PlacementTest {

  @Test
  void aKeyGoesWhereKafkasProducerPutsIt() {
    // The pipeline's writers of the new generation use the default partitioner: a copied entry must land with them.
    for (int i = 0; i < 500; i++) {
      byte[] key = ("user-" + i).getBytes(StandardCharsets.UTF_8);
      for (int n : new int[] {1, 4, 8, 24, 97}) {
        assertThat(Placement.partitionFor(key, n, 3)).isEqualTo(BuiltInPartitioner.partitionForKey(key, n));
      }
    }
  }

  @Test
  void growingMovesSomeUsersToNewPartitions() {
    int moved = 0;
    for (int i = 0; i < 200; i++) {
      byte[] key = ("user-" + i).getBytes(StandardCharsets.UTF_8);
      int at4 = Placement.partitionFor(key, 4, 0);
      int at8 = Placement.partitionFor(key, 8, 0);
      // murmur2 mod 8 refines mod 4: a user of partition p goes to p or p + 4
      assertThat(at8 % 4).isEqualTo(at4);
      moved += at8 != at4 ? 1 : 0;
    }
    assertThat(moved).isBetween(60, 140);
  }

  @Test
  void aRecordWithoutKeyStaysWithItsSourcePartitionsRecords() {
    assertThat(Placement.partitionFor(null, 8, 3)).isEqualTo(3);
    assertThat(Placement.partitionFor(null, 2, 3)).isEqualTo(1);
  }

  @Test
  void zeroPartitionsIsRefused() {
    assertThatThrownBy(() -> Placement.partitionFor(new byte[] {1}, 0, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
