package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.inbox.internal.StoreKeys;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/**
 * A cursor of another inbox generation is answered with a resync from the device's committed cursor, or (the
 * previous generation) from its own positions translated.
 */
class GenerationGateTest {

  @Test
  void aCursorOfTheServedGenerationPasses() {
    SyncCursor committed = SyncCursor.of(3, Map.of()).inGeneration(1);
    assertThat(GenerationGate.resync(SyncCursor.of(9, Map.of()).inGeneration(1), 1, committed)).isEmpty();
    assertThat(GenerationGate.resync(SyncCursor.of(9, Map.of()), 0, committed)).isEmpty();
  }

  @Test
  void anOlderCursorIsToldToResyncFromTheCommittedOneInTheServedGeneration() {
    // Given bob's phone committed inbox seq 17 and position 4 in large group g (translated by the grow), and reads
    // large groups g and h (no position in h)
    MemoryStoreView<Long> cursors = new MemoryStoreView<Long>()
        .put(StoreKeys.committed("bob", "phone"), 17L)
        .put(StoreKeys.groupPosition("bob", "phone", "g"), 4L)
        .put(StoreKeys.committed("bob", "laptop"), 99L);
    MemoryStoreView<byte[]> largeGroups = new MemoryStoreView<byte[]>()
        .put(StoreKeys.userGroup("bob", "g"), ReadIntervals.NONE.encode())
        .put(StoreKeys.userGroup("bob", "h"), ReadIntervals.NONE.encode());

    // When generation 1 serves a v1 (generation 0) cursor of the phone
    SyncCursor committed = GenerationGate.committed(cursors, largeGroups, "bob", "phone", 1);
    Map<String, Object> body = GenerationGate.resync(SyncCursor.of(250, Map.of("g", 80L)), 1, committed)
        .orElseThrow();

    // Then it names the phone's committed cursor, encoded in generation 1
    String cursor = SyncCursor.of(17, Map.of("g", 4L)).inGeneration(1).encode();
    assertThat(committed).isEqualTo(SyncCursor.of(17, Map.of("g", 4L)).inGeneration(1));
    assertThat(body).containsExactly(Map.entry("error", "inbox generation 0 is gone; resync from " + cursor),
        Map.entry("cursor", cursor));
  }

  @Test
  void aDeviceThatNeverCommittedResyncsFromTheStartAndANewerCursorIsNotServedHere() {
    MemoryStoreView<Long> cursors = new MemoryStoreView<>();
    MemoryStoreView<byte[]> largeGroups = new MemoryStoreView<>();
    SyncCursor committed = GenerationGate.committed(cursors, largeGroups, "bob", "tablet", 1);
    assertThat(committed).isEqualTo(SyncCursor.of(-1, Map.of()).inGeneration(1));
    Map<String, Object> body = GenerationGate.resync(SyncCursor.of(5, Map.of()).inGeneration(2), 1, committed)
        .orElseThrow();
    assertThat((String) body.get("error")).startsWith(
        "inbox generation 2 is not served here (this is generation 1); resync from ");
    assertThat(SyncCursor.decode((String) body.get("cursor"))).isEqualTo(committed);
  }

  @Test
  void aPreviousGenerationCursorResyncsFromItsOwnTranslatedGroupPositionsAndTheCommittedOthers() {
    // Given the phone committed g at 4 and h at 7 (translated by the grow), and sent inbox 250, g 80 and h-less
    SyncCursor committed = SyncCursor.of(17, Map.of("g", 4L, "h", 7L)).inGeneration(1);
    SyncCursor given = SyncCursor.of(250, Map.of("g", 80L));

    // When its inbox seq translated to 30 and its g position to 9
    GenerationGate.Answer answer = GenerationGate.answer(given, 1, OptionalLong.of(30),
        Map.of("g", OptionalLong.of(9)), committed);

    // Then it resyncs from its own positions, translated, and the committed one of the group it sent none for
    assertThat(answer.status()).isEqualTo(409);
    assertThat(SyncCursor.decode((String) answer.body().get("cursor")))
        .isEqualTo(SyncCursor.of(30, Map.of("g", 9L, "h", 7L)).inGeneration(1));
    // and a position below every copied record of the timeline (-1) leaves the group out: none there yet
    GenerationGate.Answer below = GenerationGate.answer(given, 1, OptionalLong.of(30),
        Map.of("g", OptionalLong.of(-1)), committed);
    assertThat(SyncCursor.decode((String) below.body().get("cursor")))
        .isEqualTo(SyncCursor.of(30, Map.of("h", 7L)).inGeneration(1));
    // and the first record of the timeline (0) is a position like any other
    GenerationGate.Answer first = GenerationGate.answer(given, 1, OptionalLong.of(30),
        Map.of("g", OptionalLong.of(0)), committed);
    assertThat(SyncCursor.decode((String) first.body().get("cursor")))
        .isEqualTo(SyncCursor.of(30, Map.of("g", 0L, "h", 7L)).inGeneration(1));
  }

  @Test
  void aPartNotAppliedYetIsAnswered503() {
    SyncCursor given = SyncCursor.of(250, Map.of("g", 80L));
    SyncCursor committed = SyncCursor.of(17, Map.of()).inGeneration(1);
    GenerationGate.Answer group = GenerationGate.answer(given, 1, OptionalLong.of(30),
        Map.of("g", OptionalLong.empty()), committed);
    assertThat(group.status()).isEqualTo(503);
    assertThat(group.body()).containsExactly(Map.entry("error", "the copy of large group g's timeline of inbox "
        + "generation 0 is not applied here up to your position 80 yet; retry"));
    GenerationGate.Answer inbox = GenerationGate.answer(given, 1, OptionalLong.empty(),
        Map.of("g", OptionalLong.of(3)), null);
    assertThat(inbox.status()).isEqualTo(503);
    assertThat(inbox.body()).containsExactly(Map.entry("error",
        "the copy of inbox generation 0 is not applied here up to your seq 250 yet; retry"));
    assertThatThrownBy(() -> GenerationGate.answer(given.inGeneration(1), 1, OptionalLong.of(1), Map.of(),
        committed)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void onlyThePositionsOfGroupsTheUserStillReadsOfThePreviousGenerationAreTranslated() {
    SyncCursor given = SyncCursor.of(250, Map.of("g", 80L, "gone", 5L, "h", 3L));
    MemoryStoreView<byte[]> largeGroups = new MemoryStoreView<byte[]>()
        .put(StoreKeys.userGroup("bob", "g"), ReadIntervals.NONE.encode())
        .put(StoreKeys.userGroup("bob", "h"), ReadIntervals.NONE.encode())
        .put(StoreKeys.userGroup("bobby", "gone"), ReadIntervals.NONE.encode());
    List<String> reads = GenerationGate.largeGroups(largeGroups, "bob");
    assertThat(reads).containsExactly("g", "h");
    assertThat(GenerationGate.groupsToTranslate(given, 1, reads)).containsExactly(Map.entry("g", 80L),
        Map.entry("h", 3L));
    assertThat(GenerationGate.groupsToTranslate(given, 2, reads)).isEmpty();
    assertThat(GenerationGate.groupsToTranslate(given.inGeneration(1), 1, reads)).isEmpty();
  }
}
