package dev.impipe.inbox.internal;

import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.runtime.streams.StoredValues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.Cancellable;
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
 * <p>Bad records (no key, no value, a key that is not the value's owner) are rejected ({@link RejectedRecord}): the
 * processing exception handler sends them to the rejected topic with the reason.
 *
 * <p>The sweep is bounded per stream thread, not per task: all sweeps of a thread share one
 * {@link PunctuationBudget} (records and time per commit window), so one transaction never carries more than about
 * a budget of deletions however many tasks and expired entries there are. While expired entries remain, a catch-up
 * punctuation runs every {@link #CATCH_UP_MS} until the backlog is gone. A stored entry that no longer decodes is
 * written to the rejected topic with its stored bytes (through the child the topology names, a sink), removed,
 * and the sweep goes on.
 */
public final class TimelineMaterialiser<V> implements Processor<String, V, byte[], byte[]> {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TimelineMaterialiser.class);

  /** Time-index entries deleted per range read: the iterator is closed before deleting. */
  static final int SWEEP_BATCH = 1_000;
  /** Most entries one new entry evicts for the per-owner cap. */
  static final int MAX_EVICTIONS = 2;

  /** Changelog records one expired entry costs: time index, entry, count. */
  static final int WRITES_PER_ENTRY = 3;
  /** How soon the sweep runs again while expired entries are left (the budget of a window was used up). */
  static final long CATCH_UP_MS = 100;
  /**
   * The sweeps of every inbox/timeline materialiser of a thread: 30,000 changelog records (10,000 entries) per
   * 100 ms window, so a backlog drains at up to 100,000 entries/s per thread; and at most 1 s per window, a safety
   * net (a slow disk) far under the 10 s transaction timeout.
   */
  public static final PunctuationBudget SWEEPS = new PunctuationBudget(30_000, 1_000,
      PunctuationBudget.DEFAULT_WINDOW_MS);

  private static final byte[] PRESENT = new byte[0];

  /**
   * What to materialise and how long to keep it; made with {@link #builder()}, which names every part.
   *
   * @param entryStore the entries, by owner and seq
   * @param timeIndexStore the entries by time, for the retention sweep
   * @param countStore entries per owner, or null when there is no cap
   * @param ownerOf the owner a value belongs to (it must equal the record key)
   * @param ownerField the name of that field, for error messages
   * @param retentionMs how long an entry is kept (when {@code expires})
   * @param maxPerOwner entries kept per owner, the oldest evicted first; 0 for no cap
   * @param sweepIntervalMs how often the retention sweep runs
   * @param expires whether entries expire at all
   */
  public record Spec<V>(String entryStore, String timeIndexStore, String countStore, Function<V, String> ownerOf,
      String ownerField, long retentionMs, long maxPerOwner, long sweepIntervalMs, boolean expires) {

    public static <V> Builder<V> builder() {
      return new Builder<>();
    }
  }

  /** Builds a {@link Spec}; stores and owner are required, by default nothing expires and there is no cap. */
  public static final class Builder<V> {
    private String entryStore;
    private String timeIndexStore;
    private String countStore;
    private Function<V, String> ownerOf;
    private String ownerField;
    private long retentionMs;
    private long maxPerOwner;
    private long sweepIntervalMs;
    private boolean expires;

    private Builder() {}

    public Builder<V> entryStore(String name) {
      this.entryStore = name;
      return this;
    }

    public Builder<V> timeIndexStore(String name) {
      this.timeIndexStore = name;
      return this;
    }

    /** The per-owner count store, needed for {@link #maxPerOwner(long)}. */
    public Builder<V> countStore(String name) {
      this.countStore = name;
      return this;
    }

    /** The owner of a value and the name of its field (the record key must be that owner). */
    public Builder<V> owner(Function<V, String> ownerOf, String ownerField) {
      this.ownerOf = ownerOf;
      this.ownerField = ownerField;
      return this;
    }

    /** Entries older than {@code retentionMs} are swept every {@code sweepIntervalMs} when {@code expires}. */
    public Builder<V> retention(long retentionMs, long sweepIntervalMs, boolean expires) {
      this.retentionMs = retentionMs;
      this.sweepIntervalMs = sweepIntervalMs;
      this.expires = expires;
      return this;
    }

    /** At most {@code max} entries per owner (0: no cap). */
    public Builder<V> maxPerOwner(long max) {
      this.maxPerOwner = max;
      return this;
    }

    public Spec<V> build() {
      if (entryStore == null || timeIndexStore == null || ownerOf == null || ownerField == null) {
        throw new IllegalStateException("entryStore, timeIndexStore and owner are required");
      }
      if (maxPerOwner > 0 && countStore == null) {
        throw new IllegalStateException("maxPerOwner needs a countStore");
      }
      return new Spec<>(entryStore, timeIndexStore, countStore, ownerOf, ownerField, retentionMs, maxPerOwner,
          sweepIntervalMs, expires);
    }
  }

  private final Spec<V> spec;
  private final PunctuationBudget budget;
  private final String rejectedChild;
  private KeyValueStore<Bytes, V> entries;
  private KeyValueStore<Bytes, byte[]> timeIndex;
  private KeyValueStore<Bytes, Long> counts;
  private ProcessorContext<byte[], byte[]> context;
  private Cancellable catchUp;

  /** Sweeps share {@link #SWEEPS}; quarantined entries go nowhere but the log. */
  public TimelineMaterialiser(Spec<V> spec) {
    this(spec, SWEEPS, null);
  }

  /**
   * @param budget shared by the sweeps of the app (per thread)
   * @param rejectedChild the child that writes quarantined entries to the rejected topic, or null for none
   */
  public TimelineMaterialiser(Spec<V> spec, PunctuationBudget budget, String rejectedChild) {
    this.spec = spec;
    this.budget = budget;
    this.rejectedChild = rejectedChild;
  }

  @Override
  public void init(ProcessorContext<byte[], byte[]> context) {
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
      throw RejectedRecord.invalid("record without key: the key must be the " + spec.ownerField());
    }
    if (record.value() == null) {
      throw RejectedRecord.invalid("record of '" + owner + "' without value");
    }
    String valueOwner = spec.ownerOf().apply(record.value());
    if (!owner.equals(valueOwner)) {
      throw RejectedRecord.invalid("key '" + owner + "' is not the " + spec.ownerField() + " of the value ('"
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
        // At most MAX_EVICTIONS per new entry: an owner far over the cap (the cap was just lowered or turned on)
        // shrinks by one entry per new one instead of deleting the whole excess in one transaction.
        count -= evictOldest(owner, Math.min(MAX_EVICTIONS, count - spec.maxPerOwner()));
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
    boolean more = false;
    if (cutoff > 0) {
      try (PunctuationBudget.Lease lease = budget.lease(now)) {
        more = sweep(cutoff, lease);
      }
    }
    if (more && catchUp == null) {
      catchUp = context.schedule(Duration.ofMillis(Math.min(CATCH_UP_MS, spec.sweepIntervalMs())),
          PunctuationType.WALL_CLOCK_TIME, this::sweep);
    } else if (!more && catchUp != null) {
      catchUp.cancel();
      catchUp = null;
    }
  }

  /** Deletes expired entries while the lease allows; true if some are left for a later run. */
  private boolean sweep(long cutoff, PunctuationBudget.Lease lease) {
    while (true) {
      List<Bytes> expired = new ArrayList<>(SWEEP_BATCH);
      try (KeyValueIterator<Bytes, byte[]> it = timeIndex.range(StoreKeys.timeIndexStart(),
          StoreKeys.timeIndexBefore(cutoff))) {
        while (it.hasNext() && expired.size() < SWEEP_BATCH) {
          KeyValue<Bytes, byte[]> next = it.next();
          expired.add(next.key);
        }
      }
      for (Bytes index : expired) {
        if (!lease.take(WRITES_PER_ENTRY)) {
          return true;
        }
        timeIndex.delete(index);
        Bytes entry = StoreKeys.timeIndexEntry(index);
        // false when the per-owner cap evicted it already: then it was not counted any more either.
        if (remove(entry) && counts != null) {
          decrement(StoreKeys.owner(StoreKeys.entryOwner(entry)));
        }
      }
      if (expired.size() < SWEEP_BATCH) {
        return false;
      }
    }
  }

  /** Deletes a stored entry; one that does not decode is quarantined (rejected topic, stored bytes) and deleted. */
  private boolean remove(Bytes key) {
    try {
      return entries.delete(key) != null;
    } catch (RuntimeException e) {
      StoredValues.Undecodable bad = StoredValues.Undecodable.in(e);
      if (bad == null) {
        throw e;
      }
      String owner = StoreKeys.entryOwner(key);
      LOG.warn("Stored entry of '{}' in {} does not decode; moved to the rejected topic", owner,
          spec.entryStore(), bad);
      if (rejectedChild != null) {
        context.forward(StoredValues.rejected(spec.entryStore(), key.get(), owner, bad,
            context.currentSystemTimeMs()), rejectedChild);
      }
      entries.put(key, null); // a put of null deletes without reading the old value
      return true;
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
