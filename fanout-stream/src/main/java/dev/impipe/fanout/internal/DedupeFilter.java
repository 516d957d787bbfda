package dev.impipe.fanout.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * "Definitely not seen" in front of the dedupe window store: Bloom filters of the keys put, by time bucket, so that
 * the common case (a message that is not a retry) needs no RocksDB range read. A range read (iterator, seek on every
 * memtable and file, no Bloom filter) was the largest single cost of the fan-out's stream thread
 * (docs/adr/0006-bloom-filter-before-dedupe.md).
 *
 * <p>Never a false negative: {@link #mightContain} is true for every key {@link #add}ed with a timestamp within the
 * window of the one asked about, and also whenever it cannot say: a bucket that is full (the memory bound is
 * reached), or one already dropped (a record older than the expiry watermark). False positives (about 1% per
 * bucket asked) only cost the range read the store would have done anyway.
 *
 * <p>Buckets span half the window, so a lookup covers at most five. Each bucket is a scalable Bloom filter: a chain
 * of filters, each twice the capacity of the one before and with half its false-positive rate, so the total stays
 * bounded however many keys arrive. Memory is bounded by {@code maxBits} over all buckets.
 */
final class DedupeFilter {

  /** Capacity of a bucket's first filter, in keys. */
  static final int FIRST_CAPACITY = 1 << 14;
  /** False-positive rate of a bucket's first filter; each next one has half of it (total below twice this). */
  static final double FIRST_FPP = 0.005;

  private final long window;
  private final long span;
  private final long maxBits;
  private final TreeMap<Long, Bucket> buckets = new TreeMap<>();
  private long bits;
  /** Buckets before this id were dropped: what they held is not known any more. */
  private long droppedBefore = Long.MIN_VALUE;

  /**
   * @param windowMs a key added at {@code t} must be found by lookups at {@code t - windowMs .. t + windowMs}
   * @param maxBits the memory bound, in filter bits (8 per byte); at least enough for one first filter
   */
  DedupeFilter(long windowMs, long maxBits) {
    this.window = windowMs;
    this.span = Math.max(1, windowMs / 2);
    this.maxBits = maxBits;
  }

  void add(byte[] key, long timestamp) {
    long id = Math.floorDiv(timestamp, span);
    if (id < droppedBefore) {
      return; // nobody asks about it without falling back to the store
    }
    buckets.computeIfAbsent(id, b -> new Bucket()).add(hash(key), this);
  }

  /** False only when no key equal to {@code key} was added with a timestamp within the window of {@code timestamp}. */
  boolean mightContain(byte[] key, long timestamp) {
    long from = Math.floorDiv(timestamp - window, span);
    long to = Math.floorDiv(timestamp + window, span);
    if (from < droppedBefore) {
      return true;
    }
    long h = hash(key);
    for (Map.Entry<Long, Bucket> e : buckets.subMap(from, true, to, true).entrySet()) {
      if (e.getValue().mightContain(h)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Drops the buckets no record at or after {@code oldestTimestamp - window} can ask about; a lookup that would
   * need one of them answers true.
   */
  void expireBefore(long oldestTimestamp) {
    long keepFrom = Math.floorDiv(oldestTimestamp - window, span);
    while (!buckets.isEmpty() && buckets.firstKey() < keepFrom) {
      bits -= buckets.pollFirstEntry().getValue().bits();
    }
    // A watermark that goes back does not bring dropped buckets back
    droppedBefore = Math.max(droppedBefore, keepFrom);
  }

  /** Filter bits held now (for metrics and tests). */
  long bits() {
    return bits;
  }

  int buckets() {
    return buckets.size();
  }

  private boolean reserve(long more) {
    if (bits + more > maxBits) {
      return false;
    }
    bits += more;
    return true;
  }

  /** 64 bits of FNV-1a over the key, finished with SplitMix64's mixer (the probes use both halves). */
  static long hash(byte[] key) {
    long h = 0xcbf29ce484222325L;
    for (byte b : key) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    h ^= h >>> 30;
    h *= 0xbf58476d1ce4e5b9L;
    h ^= h >>> 27;
    h *= 0x94d049bb133111ebL;
    return h ^ (h >>> 31);
  }

  /** A scalable Bloom filter; full once the memory bound refuses its next filter. */
  private static final class Bucket {
    private final List<Filter> filters = new ArrayList<>();
    private boolean full;

    void add(long h, DedupeFilter owner) {
      if (full) {
        return;
      }
      Filter last = filters.isEmpty() ? null : filters.get(filters.size() - 1);
      if (last == null || last.count >= last.capacity) {
        int n = filters.size();
        Filter next = new Filter((long) FIRST_CAPACITY << Math.min(n, 30), FIRST_FPP / (1L << Math.min(n, 30)));
        if (!owner.reserve(next.bits())) {
          full = true;
          return;
        }
        filters.add(next);
        last = next;
      }
      last.add(h);
    }

    boolean mightContain(long h) {
      if (full) {
        return true;
      }
      for (Filter f : filters) {
        if (f.mightContain(h)) {
          return true;
        }
      }
      return false;
    }

    long bits() {
      long sum = 0;
      for (Filter f : filters) {
        sum += f.bits();
      }
      return sum;
    }
  }

  /** One Bloom filter: {@code k} probes by double hashing (Kirsch-Mitzenmacher) into a bit array. */
  private static final class Filter {
    private final long[] words;
    private final long size;
    private final int probes;
    private final long capacity;
    private long count;

    Filter(long capacity, double fpp) {
      this.capacity = capacity;
      double ln2 = Math.log(2);
      long m = (long) Math.ceil(-capacity * Math.log(fpp) / (ln2 * ln2));
      this.words = new long[(int) Math.min(Integer.MAX_VALUE - 8, (m + 63) / 64)];
      this.size = (long) words.length * 64;
      this.probes = Math.max(1, (int) Math.round((double) size / capacity * ln2));
    }

    long bits() {
      return size;
    }

    void add(long h) {
      int h1 = (int) h;
      int h2 = (int) (h >>> 32);
      for (int i = 1; i <= probes; i++) {
        long bit = Math.floorMod(h1 + (long) i * h2, size);
        words[(int) (bit >>> 6)] |= 1L << bit;
      }
      count++;
    }

    boolean mightContain(long h) {
      int h1 = (int) h;
      int h2 = (int) (h >>> 32);
      for (int i = 1; i <= probes; i++) {
        long bit = Math.floorMod(h1 + (long) i * h2, size);
        if ((words[(int) (bit >>> 6)] & (1L << bit)) == 0) {
          return false;
        }
      }
      return true;
    }
  }
}
