package dev.impipe.cli.grow;

import org.apache.kafka.common.utils.Utils;

/**
 * Which partition of the next generation a copied record goes to: the one Kafka's producer picks for its key
 * ({@code murmur2(key) mod N}, the default partitioner and Kafka Streams' for String keys), so the pipeline's own
 * writers put a user's later entries in the same partition as the copied ones.
 */
public final class Placement {

  private Placement() {}

  /**
   * The partition of {@code key} among {@code partitions}; a record without a key (none is written today) stays
   * with its source partition's records ({@code sourcePartition mod partitions}), so its order is kept too.
   */
  public static int partitionFor(byte[] key, int partitions, int sourcePartition) {
    if (partitions < 1) {
      throw new IllegalArgumentException("partitions must be >= 1, not " + partitions);
    }
    if (key == null) {
      return sourcePartition % partitions;
    }
    return Utils.toPositive(Utils.murmur2(key)) % partitions;
  }
}
