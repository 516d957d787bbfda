package dev.impipe.inbox.query;

import dev.impipe.inbox.internal.StoreKeys;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
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
 * which {@code bin/im inbox grow} translated. Large-group positions are always the committed ones (their timelines'
 * copy index lives in the groups' partitions). A bare inbox seq carries no generation: it is read in the serving
 * one. Pure.
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
    if (seq.isEmpty()) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("error", "the copy of inbox generation " + given.generation() + " is not applied here up to your seq "
          + given.inbox() + " yet; retry");
      return Optional.of(new Answer(503, body));
    }
    SyncCursor resyncFrom = new SyncCursor(seq.getAsLong(), committed.get().groups(), generation);
    return resync(given, generation, resyncFrom).map(body -> new Answer(409, body));
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
