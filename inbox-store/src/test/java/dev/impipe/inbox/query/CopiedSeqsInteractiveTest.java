package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.inbox.internal.StoreKeys;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.internals.TimeWindow;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The copy index read through interactive queries ({@link CopiedSeqs#interactive}) against a scripted
 * {@link ScriptedStreams}: the same answers as the store's, NOT_OWNER when the partition is not here or moves under a
 * read, and "every copied entry applied" from the marker or from the end-offset check. What the answers mean is
 * {@code CopyIndexTest}'s.
 */
class CopiedSeqsInteractiveTest {

  private static final String INDEX = "inbox-copied-positions";
  private static final String APPLIED = "inbox-copy-applied";
  private static final int PARTITION = 2;

  @TempDir
  Path stateDir;

  private ScriptedStreams streams;
  private final IndexStore index = new IndexStore();
  private final MapStore<Long> applied = new MapStore<>();

  @AfterEach
  void close() {
    if (streams != null) {
      streams.close();
    }
  }

  @Test
  void answersFromThePartitionsIndex() {
    index.copied("bob", 0, 10, 0).copied("bob", 0, 12, 2).copied("bobby", 0, 11, 1);
    CopiedSeqs copies = interactive(() -> false);

    assertThat(copies.at("bob", 0, 12)).hasValue(2);
    assertThat(copies.at("bob", 0, 11)).isEmpty();
    assertThat(copies.floor("bob", 0, 11)).hasValue(0);
    assertThat(copies.floor("bob", 0, 9)).isEmpty();
    assertThat(copies.anyAbove("bob", 0, 10)).isTrue();
    assertThat(copies.anyAbove("bob", 0, 12)).isFalse();
    assertThat(streams.lastPartition).isEqualTo(PARTITION);
  }

  @Test
  void everyCopiedEntryIsAppliedOnceTheMarkerIsStoredOrTheStoreReachedTheEnd() {
    boolean[] atEnd = {false};
    CopiedSeqs copies = interactive(() -> atEnd[0]);
    assertThat(copies.allApplied()).isFalse();

    atEnd[0] = true;
    assertThat(copies.allApplied()).isTrue();

    atEnd[0] = false;
    applied.put(StoreKeys.copyApplied(), 5L);
    assertThat(copies.allApplied()).isTrue();
  }

  @Test
  void aPartitionThatIsNotHereOrMovesUnderAReadIsNotOwned() {
    streams = new ScriptedStreams(stateDir).store(INDEX, () -> {
      throw new InvalidStateStoreException("not active");
    }).store(APPLIED, () -> applied);
    assertThatThrownBy(() -> CopiedSeqs.interactive(streams, INDEX, APPLIED, PARTITION, () -> true))
        .isInstanceOfSatisfying(NotServableException.class, e -> {
          assertThat(e.reason()).isEqualTo(NotServableException.Reason.NOT_OWNER);
          assertThat(e).hasMessage("partition 2 of store inbox-copied-positions cannot be read here now: not active");
        });

    index.copied("bob", 0, 10, 0);
    CopiedSeqs copies = interactive(() -> false);
    index.closed = true;
    for (Runnable read : new Runnable[] {() -> copies.at("bob", 0, 10), () -> copies.floor("bob", 0, 10),
        () -> copies.anyAbove("bob", 0, 1)}) {
      assertThatThrownBy(read::run).isInstanceOfSatisfying(NotServableException.class, e -> {
        assertThat(e.reason()).isEqualTo(NotServableException.Reason.NOT_OWNER);
        assertThat(e).hasMessageStartingWith("partition 2 of store inbox-copied-positions moved: ");
      });
    }
  }

  private CopiedSeqs interactive(java.util.function.BooleanSupplier appliedToEnd) {
    streams = new ScriptedStreams(stateDir).store(INDEX, () -> index).store(APPLIED, () -> applied);
    return CopiedSeqs.interactive(streams, INDEX, APPLIED, PARTITION, appliedToEnd);
  }

  /** A window store of the copy index's keys (one window each), closable under its readers. */
  private static final class IndexStore implements ReadOnlyWindowStore<Bytes, Long> {
    private final NavigableMap<Bytes, Long> map = new TreeMap<>();
    boolean closed;

    IndexStore copied(String owner, int prevGeneration, long prevSeq, long seq) {
      map.put(StoreKeys.copied(owner, prevGeneration, prevSeq), seq);
      return this;
    }

    private void open() {
      if (closed) {
        throw new InvalidStateStoreException("the store is closed");
      }
    }

    @Override
    public Long fetch(Bytes key, long time) {
      open();
      return map.get(key);
    }

    @Override
    public WindowStoreIterator<Long> fetch(Bytes key, Instant from, Instant to) {
      open();
      Iterator<Long> it = map.containsKey(key) ? java.util.List.of(map.get(key)).iterator()
          : java.util.Collections.emptyIterator();
      return new WindowStoreIterator<>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public KeyValue<Long, Long> next() {
          return KeyValue.pair(0L, it.next());
        }

        @Override
        public Long peekNextKey() {
          throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
      };
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, Long> fetch(Bytes keyFrom, Bytes keyTo, Instant from, Instant to) {
      open();
      return windowed(map.subMap(keyFrom, true, keyTo, true));
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, Long> all() {
      open();
      return windowed(map);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, Long> fetchAll(Instant from, Instant to) {
      return all();
    }

    private static KeyValueIterator<Windowed<Bytes>, Long> windowed(Map<Bytes, Long> entries) {
      Iterator<Map.Entry<Bytes, Long>> it = entries.entrySet().iterator();
      return new KeyValueIterator<>() {
        @Override
        public boolean hasNext() {
          return it.hasNext();
        }

        @Override
        public KeyValue<Windowed<Bytes>, Long> next() {
          Map.Entry<Bytes, Long> e = it.next();
          return KeyValue.pair(new Windowed<>(e.getKey(), new TimeWindow(0, 1)), e.getValue());
        }

        @Override
        public Windowed<Bytes> peekNextKey() {
          throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
      };
    }
  }
}
