package dev.impipe.push;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.utils.Utils;

/**
 * Where the inbox store's active tasks run, as Kafka Streams last said: the {@code im.inbox} partitions of this
 * instance and the {@code host:port} of the owner of each other partition (absent while it moves). A user's partition
 * is the one the producers' default partitioner picks for the user id, so the owner of a user's store partition is
 * also the owner of the user's inbox and ACK timeouts (both keyed by user, with the same partition count). Pure.
 *
 * @param partitions partitions of {@code im.inbox} (0: not known yet)
 * @param local the partitions whose inbox-store task is active on this instance
 * @param remote the owner ({@code host:port}) of each partition active on another instance
 */
record Placement(int partitions, Set<Integer> local, Map<Integer, String> remote) {

  /** Nothing known yet (Streams not running): no partition is local, no owner known. */
  static final Placement UNKNOWN = new Placement(0, Set.of(), Map.of());

  Placement {
    local = Set.copyOf(local);
    remote = Map.copyOf(remote);
  }

  /** What to do with a device of some user. */
  enum Verdict {
    /** Its partition is read here. */
    SERVE,
    /** Its partition is another instance's: send it there. */
    REDIRECT,
    /** No instance owns it right now (a rebalance): retry shortly. */
    RETRY
  }

  /**
   * The partition of {@code key} among {@code partitions}: what the producers' default partitioner picks for a
   * string key (murmur2 of its UTF-8 bytes), so the inbox, the timeouts and the store agree.
   */
  static int partition(String key, int partitions) {
    return Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % partitions;
  }

  /** The partition of {@code key}; only when {@link #partitions()} is known. */
  int partitionOf(String key) {
    return partition(key, partitions);
  }

  /**
   * For a device of {@code user}: serve it when its partition is local, redirect it when another instance owns it,
   * else retry. A local partition the reader has not caught up on yet is served too: its connections are told, once
   * it has, to read through the store up to where the reader started ({@link OwnedAssignment}).
   */
  Verdict verdict(String user) {
    if (partitions == 0) {
      return Verdict.RETRY;
    }
    int p = partitionOf(user);
    if (local.contains(p)) {
      return Verdict.SERVE;
    }
    return remote.containsKey(p) ? Verdict.REDIRECT : Verdict.RETRY;
  }

  /** The owner of {@code user}'s partition on another instance, if one is known. */
  Optional<String> owner(String user) {
    return partitions == 0 ? Optional.empty() : Optional.ofNullable(remote.get(partitionOf(user)));
  }

  /** Whether {@code user}'s partition is local. */
  boolean serves(String user) {
    return partitions > 0 && local.contains(partitionOf(user));
  }

  /**
   * The inbox partitions the reader reads: the local ones, plus the partitions of the timelines {@code #groupId} of
   * the large groups that connections here listen to (read for those timelines only).
   */
  Set<Integer> inboxPartitions(Collection<String> listenedTimelines) {
    Set<Integer> wanted = new TreeSet<>(local);
    if (partitions > 0) {
      for (String timeline : listenedTimelines) {
        wanted.add(partitionOf(timeline));
      }
    }
    return wanted;
  }

  /**
   * The users among {@code connected} whose partition is not local here (lost in a rebalance, or connected while it
   * moved), each with its owner's {@code host:port} ({@code ""} while none is known): their connections must move.
   * Nothing while the placement is not known.
   */
  Map<String, String> notServed(Collection<String> connected) {
    Map<String, String> out = new LinkedHashMap<>();
    if (partitions == 0) {
      return out;
    }
    for (String user : connected) {
      if (!serves(user)) {
        out.put(user, owner(user).orElse(""));
      }
    }
    return out;
  }
}
