package dev.impipe.inbox.query;

import dev.impipe.inbox.internal.StoreKeys;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * A cursor a client echoes back must be of the inbox generation this instance serves (ADR 0014): the seqs of an
 * older generation are offsets of a topic that is gone, and nothing maps them to the new one. Such a cursor is
 * answered with a resync from the device's committed cursor, which {@code bin/im inbox grow} translated into the
 * new generation exactly (its next read returns what followed the old one: nothing lost, nothing twice). A bare
 * inbox seq carries no generation: it is read in the serving one. Pure.
 */
public final class GenerationGate {

  private GenerationGate() {}

  /**
   * The answer (409 body {@code {"error", "cursor"}}) for {@code given} when it is not of {@code generation}, empty
   * when it is.
   *
   * @param committed the device's committed cursor ({@link #committed}), encoded into the body
   */
  public static Optional<Map<String, Object>> resync(SyncCursor given, int generation, SyncCursor committed) {
    if (given.generation() == generation) {
      return Optional.empty();
    }
    String cursor = committed.inGeneration(generation).encode();
    String why = given.generation() < generation
        ? "inbox generation " + given.generation() + " is gone"
        : "inbox generation " + given.generation() + " is not served here (this is generation " + generation + ")";
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("error", why + "; resync from " + cursor);
    body.put("cursor", cursor);
    return Optional.of(body);
  }

  /**
   * The cursor {@code device} committed, in {@code generation}: its inbox seq (-1: none) and its position in each of
   * the user's large groups it committed one in.
   */
  public static SyncCursor committed(StoreView<Long> cursors, StoreView<byte[]> largeGroups, String user,
      String device, int generation) {
    Map<String, Long> groups = new LinkedHashMap<>();
    for (KeyValue<Bytes, byte[]> kv : largeGroups.range(StoreKeys.userGroupsFrom(user), StoreKeys.userGroupsTo(user),
        false, Integer.MAX_VALUE)) {
      String group = StoreKeys.userGroupId(kv.key);
      long position = Timelines.groupPosition(cursors, user, device, group);
      if (position >= 0) {
        groups.put(group, position);
      }
    }
    return SyncCursor.of(Timelines.cursor(cursors, user, device), groups).inGeneration(generation);
  }
}
