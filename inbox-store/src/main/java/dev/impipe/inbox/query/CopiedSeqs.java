package dev.impipe.inbox.query;

import dev.impipe.inbox.internal.StoreKeys;
import java.time.Instant;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * One partition's copy index ({@code inbox-copied-positions}, see {@code CopyIndexMaterialiser}): where the entries
 * a grow copied into this generation were in the previous one, and whether all of them are applied here.
 */
public interface CopiedSeqs {

  /** The seq here of {@code owner}'s entry that was at {@code prevSeq} of {@code prevGeneration}, if indexed. */
  OptionalLong at(String owner, int prevGeneration, long prevSeq);

  /** The seq here of {@code owner}'s indexed entry with the greatest previous seq at or below {@code prevSeq}. */
  OptionalLong floor(String owner, int prevGeneration, long prevSeq);

  /** Whether an entry of {@code owner} with a previous seq above {@code prevSeq} is indexed. */
  boolean anyAbove(String owner, int prevGeneration, long prevSeq);

  /** Whether every copied entry of this partition is applied (an entry written after the copy was). */
  boolean allApplied();

  /**
   * Partition {@code partition}'s index of this instance, through interactive queries: an active task of a running
   * thread only ({@link NotServableException} otherwise, like {@link InteractiveQueryView}). Every copied entry is
   * applied when an entry written after the copy is, or when {@code appliedToEnd} says the store has applied the
   * partition up to an end offset read after the copy was done (a partition no new entry came to).
   */
  static CopiedSeqs interactive(KafkaStreams streams, String indexStore, String appliedStore, int partition,
      BooleanSupplier appliedToEnd) {
    ReadOnlyWindowStore<Bytes, Long> index;
    try {
      index = streams.store(StoreQueryParameters.fromNameAndType(indexStore,
          QueryableStoreTypes.<Bytes, Long>windowStore()).withPartition(partition));
    } catch (StreamsException | IllegalStateException e) {
      throw new NotServableException(NotServableException.Reason.NOT_OWNER, "partition " + partition + " of store "
          + indexStore + " cannot be read here now: " + e.getMessage());
    }
    StoreView<Long> applied = InteractiveQueryView.of(streams, appliedStore, partition);
    CopiedSeqs local = of(index, () -> applied.get(StoreKeys.copyApplied()).isPresent()
        || appliedToEnd.getAsBoolean());
    // The store may close under a read (the task migrates): never answer from what was read so far.
    Function<InvalidStateStoreException, NotServableException> moved = e -> new NotServableException(
        NotServableException.Reason.NOT_OWNER, "partition " + partition + " of store " + indexStore + " moved: "
            + e.getMessage());
    return new CopiedSeqs() {
      @Override
      public OptionalLong at(String owner, int prevGeneration, long prevSeq) {
        return read(() -> local.at(owner, prevGeneration, prevSeq));
      }

      @Override
      public OptionalLong floor(String owner, int prevGeneration, long prevSeq) {
        return read(() -> local.floor(owner, prevGeneration, prevSeq));
      }

      @Override
      public boolean anyAbove(String owner, int prevGeneration, long prevSeq) {
        return read(() -> local.anyAbove(owner, prevGeneration, prevSeq));
      }

      @Override
      public boolean allApplied() {
        return local.allApplied();
      }

      private <T> T read(Supplier<T> query) {
        try {
          return query.get();
        } catch (InvalidStateStoreException e) {
          throw moved.apply(e);
        }
      }
    };
  }

  /** Over the window store (a partition's, through interactive queries or in a test driver). */
  static CopiedSeqs of(ReadOnlyWindowStore<Bytes, Long> index, BooleanSupplier allApplied) {
    Instant from = Instant.EPOCH;
    Instant to = Instant.ofEpochMilli(Long.MAX_VALUE);
    return new CopiedSeqs() {
      @Override
      public OptionalLong at(String owner, int prevGeneration, long prevSeq) {
        OptionalLong out = OptionalLong.empty();
        try (WindowStoreIterator<Long> it = index.fetch(StoreKeys.copied(owner, prevGeneration, prevSeq), from,
            to)) {
          while (it.hasNext()) {
            out = OptionalLong.of(it.next().value);
          }
        }
        return out;
      }

      @Override
      public OptionalLong floor(String owner, int prevGeneration, long prevSeq) {
        // Segments are iterated one after the other, each in key order: the greatest key is found by looking at
        // all (at most the user's retained entries, IM_INBOX_MAX_ENTRIES_PER_USER). Only asked off the exact hit.
        long best = -1;
        OptionalLong out = OptionalLong.empty();
        try (KeyValueIterator<Windowed<Bytes>, Long> it = index.fetch(StoreKeys.copied(owner, prevGeneration, 0),
            StoreKeys.copied(owner, prevGeneration, prevSeq), from, to)) {
          while (it.hasNext()) {
            KeyValue<Windowed<Bytes>, Long> kv = it.next();
            long seq = StoreKeys.copiedPrevSeq(kv.key.key());
            if (seq >= best) {
              best = seq;
              out = OptionalLong.of(kv.value);
            }
          }
        }
        return out;
      }

      @Override
      public boolean anyAbove(String owner, int prevGeneration, long prevSeq) {
        if (prevSeq == Long.MAX_VALUE) {
          return false;
        }
        try (KeyValueIterator<Windowed<Bytes>, Long> it = index.fetch(
            StoreKeys.copied(owner, prevGeneration, prevSeq + 1), StoreKeys.copiedTo(owner, prevGeneration), from,
            to)) {
          return it.hasNext();
        }
      }

      @Override
      public boolean allApplied() {
        return allApplied.getAsBoolean();
      }
    };
  }
}
