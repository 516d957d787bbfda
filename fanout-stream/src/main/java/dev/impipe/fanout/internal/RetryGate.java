package dev.impipe.fanout.internal;

import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * A task's dedupe of retried sends: the dedupe store, and in front of it a {@link DedupeFilter} that skips the
 * store's range read for a key it knows was not put within the window. The filter is built from the store on the
 * first message (after restoration: what the store holds then, including what an earlier run of the task put), and
 * follows every put after that.
 */
final class RetryGate {

  private final FanoutConfig config;
  private final FanoutMetrics metrics;
  private final WindowStore<Bytes, byte[]> dedupe;
  /** Built on the first message; null before, and when configured off. */
  private DedupeFilter filter;
  private long newestTimestamp = Long.MIN_VALUE;
  /** The filter heap this gate has added to {@link FanoutMetrics#dedupeFilterBytes} so far. */
  private long reportedFilterBytes;

  RetryGate(FanoutConfig config, FanoutMetrics metrics, WindowStore<Bytes, byte[]> dedupe) {
    this.config = config;
    this.metrics = metrics;
    this.dedupe = dedupe;
  }

  /** Whether {@code key} was put within the dedupe window of {@code timestamp} (a retry), counting the read. */
  boolean seen(Bytes key, long timestamp) {
    if (!mightBeRetry(key, timestamp)) {
      metrics.dedupeSkipped().increment();
      return false;
    }
    metrics.dedupeReads().increment();
    long window = config.dedupeWindow().toMillis();
    boolean retry;
    try (WindowStoreIterator<byte[]> it = dedupe.fetch(key, Math.max(0, timestamp - window), timestamp + window)) {
      retry = it.hasNext();
    }
    if (retry) {
      metrics.duplicates().increment();
    }
    return retry;
  }

  /** Remembers {@code key} at {@code timestamp}, for {@code messageId}. */
  void put(Bytes key, String messageId, long timestamp) {
    dedupe.put(key, SentCodec.dedupeValue(messageId), timestamp);
    if (filter != null) {
      filter.add(key.get(), timestamp);
      reportFilterBytes();
    }
  }

  /** Drops the filter (it is built again from the store on the next message). */
  void reset() {
    filter = null;
    newestTimestamp = Long.MIN_VALUE;
    reportFilterBytes();
  }

  private boolean mightBeRetry(Bytes dedupeKey, long timestamp) {
    if (config.dedupeFilterMb() == 0) {
      return true;
    }
    long window = config.dedupeWindow().toMillis();
    if (filter == null) {
      filter = new DedupeFilter(window, config.dedupeFilterMb() * 8L * 1024 * 1024);
      try (KeyValueIterator<Windowed<Bytes>, byte[]> all = dedupe.all()) {
        while (all.hasNext()) {
          Windowed<Bytes> key = all.next().key;
          filter.add(key.key().get(), key.window().start());
        }
      }
    }
    newestTimestamp = Math.max(newestTimestamp, timestamp);
    // The store keeps one window before its stream time; a record older than that reads the store.
    filter.expireBefore(newestTimestamp - window);
    reportFilterBytes();
    return filter.mightContain(dedupeKey.get(), timestamp);
  }

  /** Keeps the process's filter-heap gauge in step with this gate's filter. */
  private void reportFilterBytes() {
    long bytes = filter == null ? 0 : filter.bits() / 8;
    if (bytes != reportedFilterBytes) {
      metrics.dedupeFilterBytes(bytes - reportedFilterBytes);
      reportedFilterBytes = bytes;
    }
  }
}
