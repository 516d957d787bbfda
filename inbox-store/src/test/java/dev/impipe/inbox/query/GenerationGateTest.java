package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.inbox.internal.StoreKeys;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A cursor of another inbox generation is answered with a resync from the device's committed cursor. */
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
}
