package dev.impipe.inbox.query;

import dev.impipe.inbox.internal.StoreKeys;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * A cursor a client echoes back must be of the inbox generation this instance serves (ADR 0014): the seqs of another
 * generation are offsets of another topic. Such a cursor is answered 409 with a cursor of this generation to resync
 * from. For a cursor of the previous generation that is the cursor the client sent, translated through the copy
 * index ({@link CopiedSeqs}): its inbox seq s becomes the seq here of the copied entry with the greatest previous
 * seq at or below s (-1 if none), once the copy has passed s for the user (an entry above s is indexed, or every
 * copied entry of the partition is applied); before that the answer is 503, nothing guessed. For any other
 * generation (older than the previous one, or newer) no index applies: the answer is the device's committed cursor,
 * which {@code bin/im inbox grow} translated. The large-group positions of a previous-generation cursor are
 * translated the same way, each through the copy index of its timeline {@code #groupId} (another partition, read by
 * the caller: {@link #answer(SyncCursor, int, OptionalLong, Map, SyncCursor)}); only those of groups the user still
 * reads as large groups ({@link #groupsToTranslate}): a position in a group the user no longer reads is dropped (a
 * commit of it would be refused). A group the cursor has no position in keeps the committed one. A bare inbox seq
 * carries no generation: it is read in the serving one. Pure.
 */
public final class GenerationGate {

  /** An answer to a cursor of another generation: 409 {@code {"error", "cursor"}} or 503 {@code {"error"}}. */
  public record Answer(int status, Map<String, Object> body) {}

  private GenerationGate() {}

  /**
   * The answer for {@code given} from {@code user}'s device when it is not of {@code generation}, empty when it is.
   *
   * @param copies this partition's copy index
   * @param committed the device's committed cursor ({@link #committed}), read only when needed
   */
  public static Optional<Answer> answer(SyncCursor given, int generation, String user, CopiedSeqs copies,
      Supplier<SyncCursor> committed) {
    if (given.generation() == generation) {
      return Optional.empty();
    }
    if (given.generation() != generation - 1) {
      return resync(given, generation, committed.get()).map(body -> new Answer(409, body));
    }
    OptionalLong seq = translate(copies, user, given.generation(), given.inbox());
    return Optional.of(answer(given, generation, seq, Map.of(), seq.isEmpty() ? null : committed.get()));
  }

  /**
   * The answer for {@code given}, a cursor of generation {@code generation - 1}, once its parts are translated: 503
   * while one of them is not (empty), else 409 with the translated inbox seq, the translated group positions (one
   * translated to -1 is left out: the device has no position in that timeline here) and, for the user's other large
   * groups, the committed positions.
   *
   * @param inbox {@link #translate} of the inbox seq
   * @param groups {@link #translate} of each position of {@link #groupsToTranslate}, through the group's timeline
   * @param committed the device's committed cursor in {@code generation} (only read for a 409)
   */
  public static Answer answer(SyncCursor given, int generation, OptionalLong inbox, Map<String, OptionalLong> groups,
      SyncCursor committed) {
    if (given.generation() != generation - 1) {
      throw new IllegalArgumentException("a cursor of generation " + given.generation() + " is not of the one before "
          + generation);
    }
    if (inbox.isEmpty()) {
      return notApplied("inbox generation " + given.generation() + " is not applied here up to your seq "
          + given.inbox());
    }
    Map<String, Long> positions = new TreeMap<>(committed.groups());
    for (Map.Entry<String, OptionalLong> g : groups.entrySet()) {
      if (g.getValue().isEmpty()) {
        return notApplied("large group " + g.getKey() + "'s timeline of inbox generation " + given.generation()
            + " is not applied here up to your position " + given.groups().get(g.getKey()));
      }
      long seq = g.getValue().getAsLong();
      if (seq >= 0) {
        positions.put(g.getKey(), seq);
      } else {
        positions.remove(g.getKey());
      }
    }
    SyncCursor resyncFrom = new SyncCursor(inbox.getAsLong(), new TreeMap<>(positions), generation);
    return new Answer(409, resync(given, generation, resyncFrom).orElseThrow());
  }

  private static Answer notApplied(String what) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("error", "the copy of " + what + " yet; retry");
    return new Answer(503, body);
  }

  /**
   * The large-group positions of {@code given} to translate through their timelines' copy index: those of groups in
   * {@code readGroups} (the user's large groups), when {@code given} is of generation {@code generation - 1}; none
   * otherwise.
   */
  public static Map<String, Long> groupsToTranslate(SyncCursor given, int generation,
      Collection<String> readGroups) {
    Map<String, Long> out = new TreeMap<>();
    if (given.generation() == generation - 1) {
      given.groups().forEach((group, position) -> {
        if (readGroups.contains(group)) {
          out.put(group, position);
        }
      });
    }
    return out;
  }

  /** The ids of {@code user}'s large groups (the groups whose timelines the user reads), in id order. */
  public static List<String> largeGroups(StoreView<byte[]> largeGroups, String user) {
    List<String> out = new ArrayList<>();
    for (KeyValue<Bytes, byte[]> kv : largeGroups.range(StoreKeys.userGroupsFrom(user), StoreKeys.userGroupsTo(user),
        false, Integer.MAX_VALUE)) {
      out.add(StoreKeys.userGroupId(kv.key));
    }
    return out;
  }

  /**
   * The seq in this generation of inbox seq {@code seq} of {@code prevGeneration} (-1 stays -1): the seq of the
   * copied entry with the greatest previous seq at or below it, -1 if there is none; empty while the copy may not
   * have passed it for {@code owner} here.
   */
  public static OptionalLong translate(CopiedSeqs copies, String owner, int prevGeneration, long seq) {
    if (seq < 0) {
      return OptionalLong.of(-1);
    }
    OptionalLong exact = copies.at(owner, prevGeneration, seq);
    if (exact.isPresent()) {
      return exact;
    }
    if (copies.anyAbove(owner, prevGeneration, seq) || copies.allApplied()) {
      OptionalLong floor = copies.floor(owner, prevGeneration, seq);
      return OptionalLong.of(floor.orElse(-1));
    }
    return OptionalLong.empty();
  }

  /**
   * The 409 body {@code {"error", "cursor"}} for {@code given} when it is not of {@code generation}, empty when it
   * is.
   *
   * @param resyncFrom the cursor to resync from (read in {@code generation}), encoded into the body
   */
  public static Optional<Map<String, Object>> resync(SyncCursor given, int generation, SyncCursor resyncFrom) {
    if (given.generation() == generation) {
      return Optional.empty();
    }
    String cursor = resyncFrom.inGeneration(generation).encode();
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
    for (String group : largeGroups(largeGroups, user)) {
      long position = Timelines.groupPosition(cursors, user, device, group);
      if (position >= 0) {
        groups.put(group, position);
      }
    }
    return SyncCursor.of(Timelines.cursor(cursors, user, device), groups).inGeneration(generation);
  }
}
