package dev.impipe.runtime.streams;

import java.io.File;
import java.io.IOException;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowBytesStoreSupplier;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.apache.kafka.streams.state.internals.OffsetCheckpoint;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * A RocksDB window store whose committed changelog offsets survive a clean close while its segments hold none.
 *
 * <p>Kafka Streams 4.3 (KIP-1035) keeps a store's committed offsets in the store; a segmented (window) store keeps
 * them in each of its segments, so one that has no segment (never written, or every segment expired) has nowhere to
 * keep them: after a clean close its {@code committedOffset} is null. At the next start, under exactly-once,
 * {@code ProcessorStateManager} takes a null offset in a non-empty task directory for a crash ("did not find
 * checkpoint offsets while stores are not empty") and wipes the whole task: every store of it is restored from the
 * changelogs' start, on every restart.
 *
 * <p>So this layer keeps such offsets the way Kafka Streams kept every offset before 4.3: at a close, the offsets
 * the store was last committed with that its segments do not hold are written to a file of the task directory
 * ({@code .checkpoint...}, which Kafka Streams does not count as state); the next {@link #init} reads it and deletes
 * it. A crash leaves no file, so it is still taken for a crash and the task still wiped (its segments' own status
 * check does the same for a store that has segments). Nothing is written when the store was written since its last
 * commit (what it holds may not be committed); a task closed dirty under exactly-once has its directory wiped anyway,
 * and a store Kafka Streams finds corrupted is committed with no offsets, which this forgets too.
 */
public final class KeptOffsetsWindowStore extends WrappedStateStore<WindowStore<Bytes, byte[]>, Bytes, byte[]>
    implements
      WindowStore<Bytes, byte[]> {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(KeptOffsetsWindowStore.class);
  /** The file's name before the store's: Kafka Streams does not count {@code .checkpoint*} files as state. */
  static final String FILE_PREFIX = ".checkpoint.kept-offsets_";

  private OffsetCheckpoint file;
  /** The offsets of the last commit (or read at init), null values left out. */
  private Map<TopicPartition, Long> committed = new HashMap<>();
  /** Whether a write reached the store since the last commit. */
  private boolean written;

  KeptOffsetsWindowStore(WindowStore<Bytes, byte[]> inner) {
    super(inner);
  }

  /** {@code supplier}'s stores, keeping their offsets while they have no segment. */
  public static WindowBytesStoreSupplier supplier(WindowBytesStoreSupplier supplier) {
    return new WrappingWindowSupplier(supplier) {
      @Override
      WindowStore<Bytes, byte[]> wrap(WindowStore<Bytes, byte[]> store) {
        return new KeptOffsetsWindowStore(store);
      }
    };
  }

  @Override
  public void init(StateStoreContext context, StateStore root) {
    file = new OffsetCheckpoint(new File(context.stateDir(), FILE_PREFIX + name()));
    try {
      committed = new HashMap<>(file.read());
    } catch (IOException | RuntimeException e) {
      throw new ProcessorStateException("reading the kept offsets of store " + name(), e);
    }
    super.init(context, root);
    try {
      file.delete(); // from here on a crash leaves none
    } catch (IOException e) {
      throw new ProcessorStateException("deleting the kept offsets of store " + name(), e);
    }
  }

  @Override
  public Long committedOffset(TopicPartition partition) {
    Long own = wrapped().committedOffset(partition);
    return own != null ? own : committed.get(partition);
  }

  @Override
  public void commit(Map<TopicPartition, Long> changelogOffsets) {
    super.commit(changelogOffsets);
    committed = new HashMap<>();
    changelogOffsets.forEach((partition, offset) -> {
      if (offset != null) {
        committed.put(partition, offset);
      }
    });
    written = false;
  }

  @Override
  public void close() {
    Map<TopicPartition, Long> kept = new HashMap<>();
    if (!written && wrapped().isOpen()) {
      committed.forEach((partition, offset) -> {
        if (wrapped().committedOffset(partition) == null) {
          kept.put(partition, offset);
        }
      });
    }
    super.close();
    if (!kept.isEmpty()) {
      try {
        file.write(kept);
      } catch (IOException e) {
        // The next start takes the task for crashed and restores it: slow, not wrong.
        LOG.warn("Could not keep the committed offsets of store {} ({}): its task will be restored at the next start",
            name(), e.toString());
      }
    }
  }

  @Override
  public void put(Bytes key, byte[] value, long windowStartTimestamp) {
    written = true;
    wrapped().put(key, value, windowStartTimestamp);
  }

  @Override
  public byte[] fetch(Bytes key, long time) {
    return wrapped().fetch(key, time);
  }

  @Override
  public WindowStoreIterator<byte[]> fetch(Bytes key, long timeFrom, long timeTo) {
    return wrapped().fetch(key, timeFrom, timeTo);
  }

  @Override
  public WindowStoreIterator<byte[]> fetch(Bytes key, Instant timeFrom, Instant timeTo) {
    return wrapped().fetch(key, timeFrom, timeTo);
  }

  @Override
  public WindowStoreIterator<byte[]> backwardFetch(Bytes key, long timeFrom, long timeTo) {
    return wrapped().backwardFetch(key, timeFrom, timeTo);
  }

  @Override
  public WindowStoreIterator<byte[]> backwardFetch(Bytes key, Instant timeFrom, Instant timeTo) {
    return wrapped().backwardFetch(key, timeFrom, timeTo);
  }

  @Override
  public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes keyFrom, Bytes keyTo, long timeFrom, long timeTo) {
    return wrapped().fetch(keyFrom, keyTo, timeFrom, timeTo);
  }

  @Override
  public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(Bytes keyFrom, Bytes keyTo, Instant timeFrom,
      Instant timeTo) {
    return wrapped().fetch(keyFrom, keyTo, timeFrom, timeTo);
  }

  @Override
  public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(Bytes keyFrom, Bytes keyTo, long timeFrom,
      long timeTo) {
    return wrapped().backwardFetch(keyFrom, keyTo, timeFrom, timeTo);
  }

  @Override
  public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(Bytes keyFrom, Bytes keyTo, Instant timeFrom,
      Instant timeTo) {
    return wrapped().backwardFetch(keyFrom, keyTo, timeFrom, timeTo);
  }

  @Override
  public KeyValueIterator<Windowed<Bytes>, byte[]> fetchAll(long timeFrom, long timeTo) {
    return wrapped().fetchAll(timeFrom, timeTo);
  }

  @Override
  public KeyValueIterator<Windowed<Bytes>, byte[]> fetchAll(Instant timeFrom, Instant timeTo) {
    return wrapped().fetchAll(timeFrom, timeTo);
  }

  @Override
  public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetchAll(long timeFrom, long timeTo) {
    return wrapped().backwardFetchAll(timeFrom, timeTo);
  }

  @Override
  public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetchAll(Instant timeFrom, Instant timeTo) {
    return wrapped().backwardFetchAll(timeFrom, timeTo);
  }

  @Override
  public KeyValueIterator<Windowed<Bytes>, byte[]> all() {
    return wrapped().all();
  }

  @Override
  public KeyValueIterator<Windowed<Bytes>, byte[]> backwardAll() {
    return wrapped().backwardAll();
  }
}
