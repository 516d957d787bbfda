package dev.impipe.inbox;

import static dev.impipe.inbox.TestData.cursor;
import static dev.impipe.inbox.TestData.message;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.inbox.query.CopiedSeqs;
import dev.impipe.inbox.query.GenerationGate;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import dev.impipe.testkit.StreamsTestConfig;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The copy index of a grown inbox on a TopologyTestDriver (ADR 0014, Open 5): a cursor of the previous generation
 * that a client sends is translated through it, or answered 503 while the copy is not applied up to it.
 */
class CopyIndexTest {

  private static final String REGISTRY = "mock://copy-index-test";
  private static final Instant START = Instant.parse("2026-03-01T12:00:00Z");

  @TempDir
  Path stateDir;

  @AfterEach
  void tearDown() {
    InMemorySchemaRegistry.drop(REGISTRY);
  }

  @Test
  void aCursorOnACopiedEntryResyncsFromThatEntrysCopy() {
    try (Store store = new Store(1)) {
      // Given bob's generation-0 entries 10, 12, 15 copied to offsets 0, 2, 3 (bobby's 11 at 1), and bob's phone
      // committed only the copy of 10
      store.copied("bob", 10).copied("bobby", 11).copied("bob", 12).copied("bob", 15);
      store.cursors.pipeInput("bob", cursor("bob", "phone", 0), START);

      // When the phone sends the generation-0 cursor 12 it synced (not committed)
      GenerationGate.Answer answer = store.answer(SyncCursor.of(12, Map.of()));

      // Then it resyncs from the copy of 12, not from its committed cursor
      assertThat(answer.status()).isEqualTo(409);
      assertThat(answer.body().get("cursor")).isEqualTo(SyncCursor.of(2, Map.of()).inGeneration(1).encode());
      assertThat(store.answer(SyncCursor.of(15, Map.of())).body().get("cursor"))
          .isEqualTo(SyncCursor.of(3, Map.of()).inGeneration(1).encode());
      // and a cursor before every entry (-1) is -1 here
      assertThat(store.answer(SyncCursor.of(-1, Map.of())).body().get("cursor"))
          .isEqualTo(SyncCursor.of(-1, Map.of()).inGeneration(1).encode());
    }
  }

  @Test
  void aCursorWhoseEntryExpiredBeforeTheCopyResyncsFromTheNewestCopiedEntryBelowIt() {
    try (Store store = new Store(1)) {
      // Given bob's generation-0 entries up to 7 expired before the copy; 8 and 20 were copied (offsets 0, 1)
      store.copied("bob", 8).copied("bob", 20);

      // When a phone sends cursor 5 (expired), or 9 (no entry of bob's: its entry expired with the inbox store)
      // Then 5 is before every copied entry (-1: all of them follow), 9 is after the copy of 8
      assertThat(store.answer(SyncCursor.of(5, Map.of())).body().get("cursor"))
          .isEqualTo(SyncCursor.of(-1, Map.of()).inGeneration(1).encode());
      assertThat(store.answer(SyncCursor.of(9, Map.of())).body().get("cursor"))
          .isEqualTo(SyncCursor.of(0, Map.of()).inGeneration(1).encode());
    }
  }

  @Test
  void aCursorTheCopyHasNotReachedIsAnswered503UntilEveryCopiedEntryIsApplied() {
    try (Store store = new Store(1)) {
      // Given the store has applied the copies of bob's 10 and 12 only (offsets 0, 1)
      store.copied("bob", 10).copied("bob", 12);

      // When a phone sends cursor 15: the copy of 15 may come next
      GenerationGate.Answer early = store.answer(SyncCursor.of(15, Map.of()));

      // Then 503, nothing guessed
      assertThat(early.status()).isEqualTo(503);
      assertThat((String) early.body().get("error"))
          .isEqualTo("the copy of inbox generation 0 is not applied here up to your seq 15 yet; retry");

      // When an entry written after the copy (no headers) is applied: every copied entry of the partition is
      store.written("bob");

      // Then 15 resyncs from the newest copied entry at or below it (12)
      GenerationGate.Answer late = store.answer(SyncCursor.of(15, Map.of()));
      assertThat(late.status()).isEqualTo(409);
      assertThat(late.body().get("cursor")).isEqualTo(SyncCursor.of(1, Map.of()).inGeneration(1).encode());
      // and an entry without the headers is not indexed, the marker is set once, at the first one
      store.written("bob");
      assertThat(store.applied().get(StoreKeys.copyApplied())).contains(2L);
    }
  }

  @Test
  void aCursorOfANonAdjacentOrNewerGenerationResyncsFromTheCommittedCursor() {
    try (Store store = new Store(2)) {
      // Given generation 2: bob's generation-1 entry 4 copied to offset 0, the phone committed 0
      store.copied("bob", 4);
      store.cursors.pipeInput("bob", cursor("bob", "phone", 0), START);
      store.written("bob");

      // When the phone sends a generation-0 cursor (its seqs mean nothing to the index: copies hold generation 1's)
      GenerationGate.Answer old = store.answer(SyncCursor.of(4, Map.of()));

      // Then it resyncs from its committed cursor, as before the index existed; a newer generation's cursor too
      assertThat(old.status()).isEqualTo(409);
      assertThat(old.body().get("cursor")).isEqualTo(SyncCursor.of(0, Map.of()).inGeneration(2).encode());
      GenerationGate.Answer newer = store.answer(SyncCursor.of(99, Map.of()).inGeneration(3));
      assertThat(newer.status()).isEqualTo(409);
      assertThat((String) newer.body().get("error")).startsWith("inbox generation 3 is not served here");
      assertThat(newer.body().get("cursor")).isEqualTo(SyncCursor.of(0, Map.of()).inGeneration(2).encode());
      // and the generation-1 cursor 4 is translated
      assertThat(store.answer(SyncCursor.of(4, Map.of()).inGeneration(1)).body().get("cursor"))
          .isEqualTo(SyncCursor.of(0, Map.of()).inGeneration(2).encode());
    }
  }

  @Test
  void aBareSeqIsReadInTheServedGenerationAndPasses() {
    try (Store store = new Store(1)) {
      store.copied("bob", 10);
      // A bare seq (PUT .../cursor {"seq"}) is made a cursor of the served generation: nothing to translate
      assertThat(GenerationGate.answer(SyncCursor.of(10, Map.of()).inGeneration(1), 1, "bob", store.copies(),
          () -> {
            throw new AssertionError("the committed cursor is not read");
          })).isEqualTo(Optional.empty());
    }
  }

  @Test
  void aLargeGroupTimelineIsIndexedUnderItsOwnKeyAndRejectedRecordsAreNot() {
    try (Store store = new Store(1)) {
      store.copied("#g", 30);
      // a record whose key is not its entry's owner is rejected by the inbox materialiser: not indexed either
      RecordHeaders headers = new RecordHeaders();
      new PrevPosition(0, 31).writeTo(headers);
      store.inbox.pipeInput(new TestRecord<>("mallory", message("bob", "c1", "x", START), headers, START));

      assertThat(store.copies().at("#g", 0, 30)).hasValue(0);
      assertThat(store.copies().at("mallory", 0, 31)).isEmpty();
      assertThat(store.copies().at("bob", 0, 31)).isEmpty();
    }
  }

  @Test
  void aLargeGroupPositionIsTranslatedThroughItsTimelinesIndexLikeAnInboxSeq() {
    try (Store store = new Store(1)) {
      // Given timeline #g's generation-0 records 40 and 44 copied to offsets 0 and 1 (bob's 10 to 2)
      store.copied("#g", 40).copied("#g", 44).copied("bob", 10);

      // Then a position on a copied record is that record's copy, one between two the copy of the one below it,
      // one below every copied record -1
      assertThat(GenerationGate.translate(store.copies(), "#g", 0, 44)).hasValue(1);
      assertThat(GenerationGate.translate(store.copies(), "#g", 0, 42)).hasValue(0);
      assertThat(GenerationGate.translate(store.copies(), "#g", 0, 39)).hasValue(-1);
      // and one above every copied record is not known until every copied entry is applied
      assertThat(GenerationGate.translate(store.copies(), "#g", 0, 50)).isEmpty();
      store.written("bob");
      assertThat(GenerationGate.translate(store.copies(), "#g", 0, 50)).hasValue(1);
    }
  }

  /** The inbox store of one generation on a test driver. */
  private final class Store implements AutoCloseable {
    final int generation;
    final TopologyTestDriver driver;
    final TestInputTopic<String, InboxEntry> inbox;
    final TestInputTopic<String, DeviceCursor> cursors;
    private int written;

    Store(int generation) {
      this.generation = generation;
      ImTopics topics = new ImTopics(TopicNames.withPrefix("im.").inGeneration(generation),
          InMemorySchemaRegistry.forScope(REGISTRY));
      driver = new TopologyTestDriver(InboxStoreTopology.build(topics, InboxStoreConfig.defaults()),
          StreamsTestConfig.forDriver("inbox-store", topics.names(), stateDir), START);
      inbox = driver.createInputTopic(topics.inbox().name(), topics.inbox().keySerde().serializer(),
          topics.inbox().valueSerde().serializer());
      cursors = driver.createInputTopic(topics.deviceCursors().name(), topics.deviceCursors().keySerde()
          .serializer(), topics.deviceCursors().valueSerde().serializer());
    }

    /** An entry of {@code owner} the grow copied from seq {@code prevSeq} of the previous generation. */
    Store copied(String owner, long prevSeq) {
      RecordHeaders headers = new RecordHeaders();
      new PrevPosition(generation - 1, prevSeq).writeTo(headers);
      inbox.pipeInput(new TestRecord<>(owner, message(owner, "c1", "p" + prevSeq, START), headers, START));
      return this;
    }

    /** An entry the fan-out wrote to this generation. */
    void written(String owner) {
      inbox.pipeInput(owner, message(owner, "c1", "w" + written++, START), START);
    }

    StoreView<Long> applied() {
      return StoreView.of(driver.getKeyValueStore(InboxStoreTopology.COPY_APPLIED_STORE));
    }

    CopiedSeqs copies() {
      return CopiedSeqs.of(driver.getWindowStore(InboxStoreTopology.COPY_INDEX_STORE),
          () -> applied().get(StoreKeys.copyApplied()).isPresent());
    }

    GenerationGate.Answer answer(SyncCursor given) {
      StoreView<Long> cursorView = StoreView.of(driver.getKeyValueStore(InboxStoreTopology.CURSOR_STORE));
      StoreView<byte[]> largeGroups = StoreView.of(driver.getKeyValueStore(InboxStoreTopology.LARGE_GROUPS_STORE));
      return GenerationGate.answer(given, generation, "bob", copies(),
          () -> GenerationGate.committed(cursorView, largeGroups, "bob", "phone", generation)).orElseThrow();
    }

    @Override
    public void close() {
      driver.close();
    }
  }
}
