package dev.impipe.inbox.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Materialises a topic keyed by a timeline owner (user id for {@code im.inbox}, conversation id for
 * {@code im.messages}) into a store keyed by owner + the record's offset, which is the entry's seq. A time index
 * (timestamp + entry key) lets the retention punctuator delete expired entries by walking one ordered key range
 * instead of scanning the store; an optional per-owner cap evicts the oldest entries on write.
 *
 * <p>Bad records (no key, no value, a key that is not the value's owner) are thrown back to Streams, whose
 * processing exception handler sends them to the rejected topic with the reason.
 */
public final class TimelineMaterialiser<V> implements Processor<String, V, Void, Void> {

  /** Time-index entries deleted per range read: the iterator is closed before deleting. */
  static final int SWEEP_BATCH = 1_000;
  /** Upper bound of deletions per punctuation, so a huge backlog does not stall processing; the next run goes on. */
  static final int SWEEP_MAX_PER_RUN = 100_000;

  private static final byte[] PRESENT = new byte[0];

  /** What to materialise and how long to keep it. */
  public record Spec<V>(String entryStore, String timeIndexStore, String countStore, Function<V, String> ownerOf,
      String ownerField, long retentionMs, long maxPerOwner, long sweepIntervalMs, boolean expires) {}

  private final Spec<V> spec;
  private KeyValueStore<Bytes, V> entries;
  private KeyValueStore<Bytes, byte[]> timeIndex;
  private KeyValueStore<Bytes, Long> counts;
  private ProcessorContext<Void, Void> context;

  public TimelineMaterialiser(Spec<V> spec) {
    this.spec = spec;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    this.entries = context.getStateStore(spec.entryStore());
    this.timeIndex = context.getStateStore(spec.timeIndexStore());
    this.counts = spec.countStore() == null ? null : context.getStateStore(spec.countStore());
    if (spec.expires()) {
      // Wall-clock time: an idle partition (no new records, so no stream time) still expires its entries.
      context.schedule(Duration.ofMillis(spec.sweepIntervalMs()), PunctuationType.WALL_CLOCK_TIME, this::sweep);
    }
  }

  @Override
  public void process(Record<String, V> record) {
    String owner = record.key();
    if (owner == null) {
      throw new IllegalArgumentException("record without key: the key must be the " + spec.ownerField());
    }
    if (record.value() == null) {
      throw new IllegalArgumentException("record of '" + owner + "' without value");
    }
    String valueOwner = spec.ownerOf().apply(record.value());
    if (!owner.equals(valueOwner)) {
      throw new IllegalArgumentException("key '" + owner + "' is not the " + spec.ownerField() + " of the value ('"
          + valueOwner + "'): the record would be stored where no query finds it");
    }
    long seq = context.recordMetadata().orElseThrow(() -> new IllegalStateException("no record metadata")).offset();
    Bytes key = StoreKeys.entry(owner, seq);
    entries.put(key, record.value());
    timeIndex.put(StoreKeys.timeIndex(record.timestamp(), key), PRESENT);
    if (counts != null) {
      Bytes ownerKey = StoreKeys.owner(owner);
      Long stored = counts.get(ownerKey);
      long count = (stored == null ? 0 : stored) + 1;
      if (spec.maxPerOwner() > 0 && count > spec.maxPerOwner()) {
        count -= evictOldest(owner, count - spec.maxPerOwner());
      }
      counts.put(ownerKey, count);
    }
  }

  /** Deletes the {@code n} oldest entries of an owner; their time-index entries go when they expire. */
  private long evictOldest(String owner, long n) {
    List<Bytes> oldest = new ArrayList<>();
    try (KeyValueIterator<Bytes, V> it = entries.range(StoreKeys.entry(owner, 0), StoreKeys.entry(owner,
        Long.MAX_VALUE))) {
      while (it.hasNext() && oldest.size() < n) {
        oldest.add(it.next().key);
      }
    }
    oldest.forEach(entries::delete);
    return oldest.size();
  }

  private void sweep(long now) {
    long cutoff = now - spec.retentionMs();
    if (cutoff <= 0) {
      return;
    }
    int deleted = 0;
    while (deleted < SWEEP_MAX_PER_RUN) {
      List<Bytes> expired = new ArrayList<>(SWEEP_BATCH);
      try (KeyValueIterator<Bytes, byte[]> it = timeIndex.range(StoreKeys.timeIndexStart(),
          StoreKeys.timeIndexBefore(cutoff))) {
        while (it.hasNext() && expired.size() < SWEEP_BATCH) {
          KeyValue<Bytes, byte[]> next = it.next();
          expired.add(next.key);
        }
      }
      for (Bytes index : expired) {
        timeIndex.delete(index);
        Bytes entry = StoreKeys.timeIndexEntry(index);
        // null when the per-owner cap evicted it already: then it was not counted any more either.
        if (entries.delete(entry) != null && counts != null) {
          decrement(StoreKeys.owner(StoreKeys.entryOwner(entry)));
        }
      }
      deleted += expired.size();
      if (expired.size() < SWEEP_BATCH) {
        return;
      }
    }
  }

  private void decrement(Bytes ownerKey) {
    Long stored = counts.get(ownerKey);
    if (stored == null || stored <= 1) {
      counts.delete(ownerKey);
    } else {
      counts.put(ownerKey, stored - 1);
    }
  }
}
