package dev.impipe.ack.wheel;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * The rolling scan of {@code ack-acked} (pure: the processor opens the store range and deletes what this returns):
 * devices not ACKed for the retention go, a slice per punctuation (at most {@code perRun} keys looked at, and only
 * as many removed as the round's budget allows); a full pass starts at most once per retention / 10.
 */
final class AckedSweep {

  private final long retentionMs;
  private final int perRun;
  /** Where the scan goes on (null: start over), and when the last full pass finished. */
  private Bytes from;
  private long done = Long.MIN_VALUE;

  AckedSweep(long retentionMs, int perRun) {
    this.retentionMs = retentionMs;
    this.perRun = perRun;
  }

  /** Whether a slice is due at {@code now}: a pass is under way, or the last one finished long enough ago. */
  boolean due(long now) {
    return from != null || done == Long.MIN_VALUE || now - done >= retentionMs / 10;
  }

  /** The key the next slice starts at (null: the first). */
  Bytes from() {
    return from;
  }

  /**
   * One slice over {@code entries} (the store from {@link #from()} on, in key order) at {@code now}: the keys to
   * remove. {@code take} asks the round's budget for one removal; when it says no, the slice stops there.
   */
  List<Bytes> slice(Iterator<KeyValue<Bytes, byte[]>> entries, long now, BooleanSupplier take) {
    List<Bytes> old = new ArrayList<>();
    Bytes last = null;
    boolean finished = true;
    int seen = 0;
    while (entries.hasNext()) {
      if (seen++ >= perRun) {
        finished = false;
        break;
      }
      KeyValue<Bytes, byte[]> kv = entries.next();
      last = kv.key;
      if (now - ackedAt(kv.value) >= retentionMs) {
        if (!take.getAsBoolean()) {
          finished = false;
          break;
        }
        old.add(kv.key);
      }
    }
    if (finished) {
      from = null;
      done = now;
    } else if (last != null) {
      from = last;
    }
    return old;
  }

  private static long ackedAt(byte[] value) {
    try {
      return WheelCodec.decodeAckedAt(value);
    } catch (RuntimeException e) {
      return 0; // an unreadable entry only ever helped ignore a late delivery: let it go
    }
  }
}
