package dev.impipe.ack.wheel;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * The rolling scan of the device records (pure: the processor opens the store range and deletes what this returns):
 * a record with nothing pending whose device has not ACKed for the retention goes (its highest ACK only had to
 * outlive a late Delivery record), a slice per punctuation (at most {@code perRun} keys looked at, and only as many
 * removed as the round's budget allows); a full pass starts at most once per retention / 10. A record that does not
 * decode is returned too: the processor moves it to the rejected topic.
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
  List<KeyValue<Bytes, byte[]>> slice(Iterator<KeyValue<Bytes, byte[]>> entries, long now, BooleanSupplier take) {
    List<KeyValue<Bytes, byte[]>> old = new ArrayList<>();
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
      if (removable(kv.value, now)) {
        if (!take.getAsBoolean()) {
          finished = false;
          break;
        }
        old.add(kv);
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

  private boolean removable(byte[] value, long now) {
    WheelCodec.DeviceHeader header;
    try {
      header = WheelCodec.decodeHeader(value);
    } catch (RuntimeException e) {
      return true;
    }
    return header.runs() == 0 && now - header.ackedAt() >= retentionMs;
  }
}
