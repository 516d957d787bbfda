package dev.impipe.ack.wheel;

import dev.impipe.ack.wheel.DeviceTimers.Run;
import dev.impipe.runtime.streams.OrderedKey;
import dev.impipe.runtime.streams.VersionedValue;
import java.util.ArrayList;
import java.util.List;

/**
 * Every byte layout of the wheel's RocksDB stores, in one place. Keys are {@link OrderedKey}s (strings escaped and
 * terminated, numbers big-endian with the sign bit flipped), so RocksDB's byte order is the fields' order and no
 * user or device id can run into the next field. Values are {@link VersionedValue}s (version byte first).
 *
 * <pre>
 * device key  : string userId, string deviceId                         -> device value
 * device value: [version 1] int64 highest ACKed seq (Long.MIN_VALUE: none), int64 ackedAt (epoch ms),
 *               int32 n, n runs of { int64 fromSeq, int64 toSeq, int64 slot, int64 firstPushedAt,
 *               int64 deadline, int64 lastDeadline, int32 attempts }, in seq order, not overlapping
 * slot key    : int64 slot, string userId, string deviceId             -> empty value
 * </pre>
 */
public final class WheelCodec {

  /** The value of a slot key: the key says everything. */
  public static final byte[] EMPTY = new byte[0];

  /** Bytes of one run in a device value. */
  static final int RUN_BYTES = 6 * Long.BYTES + Integer.BYTES;

  private static final int VERSION = 1;
  private static final int HEADER_BYTES = 1 + 2 * Long.BYTES + Integer.BYTES;

  private WheelCodec() {}

  /** A decoded slot key. */
  public record SlotKey(long slot, String userId, String deviceId) {}

  /** The fields of a device value the ACKed-retention sweep needs, read without its runs. */
  record DeviceHeader(long ackedSeq, long ackedAt, int runs) {}

  /** The key of a device's record. */
  public static byte[] device(String userId, String deviceId) {
    return OrderedKey.key().string(userId).string(deviceId).build();
  }

  public static byte[] slot(long slot, String userId, String deviceId) {
    return OrderedKey.key().int64(slot).string(userId).string(deviceId).build();
  }

  /** The smallest possible key of {@code slot}: a range [slotStart(a), slotStart(b)] holds exactly slots a..b-1. */
  public static byte[] slotStart(long slot) {
    return OrderedKey.key().int64(slot).build();
  }

  public static SlotKey decodeSlot(byte[] key) {
    OrderedKey.Reader r = OrderedKey.read(key);
    return new SlotKey(r.int64(), r.string(), r.string());
  }

  static byte[] deviceValue(DeviceTimers timers) {
    List<Run> runs = timers.runs();
    VersionedValue.Writer w = VersionedValue.write(VERSION).int64(timers.ackedSeq()).int64(timers.ackedAt())
        .int32(runs.size());
    for (Run r : runs) {
      w.int64(r.fromSeq()).int64(r.toSeq()).int64(r.slot()).int64(r.firstPushedAt()).int64(r.deadline())
          .int64(r.lastDeadline()).int32(r.attempts());
    }
    return w.build();
  }

  /**
   * A device value, checked: at most {@code maxPending} pending seqs, runs in seq order and not overlapping, no
   * more runs than bytes for them (a hostile value cannot make the wheel allocate or emit without bound).
   */
  static DeviceTimers decodeDevice(byte[] value, long maxPending) {
    VersionedValue.Reader r = VersionedValue.read(value, AckWheelTopology.DEVICE_STORE, VERSION);
    long ackedSeq = r.int64();
    long ackedAt = r.int64();
    int n = r.int32();
    if (n < 0 || (long) n * RUN_BYTES != value.length - HEADER_BYTES) {
      throw malformed(n + " runs in " + value.length + " bytes");
    }
    List<Run> runs = new ArrayList<>(n);
    long pending = 0;
    long previous = ackedSeq;
    for (int i = 0; i < n; i++) {
      long from = r.int64();
      long to = r.int64();
      if (to < from || (i > 0 || ackedSeq != DeviceTimers.NO_ACK) && from <= previous) {
        throw malformed("run " + from + ".." + to + " after seq " + previous);
      }
      Run run = new Run(from, to, r.int64(), r.int64(), r.int64(), r.int64(), r.int32());
      if (run.size() <= 0 || run.size() > maxPending - pending) {
        throw malformed("more than " + maxPending + " pending seqs");
      }
      pending += run.size();
      previous = to;
      runs.add(run);
    }
    // No bytes after the runs: the length was checked against the run count above
    return new DeviceTimers(ackedSeq, ackedAt, runs);
  }

  /** The ACK and run count of a device value, without reading its runs. */
  static DeviceHeader decodeHeader(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, AckWheelTopology.DEVICE_STORE, VERSION);
    return new DeviceHeader(r.int64(), r.int64(), r.int32());
  }

  private static VersionedValue.MalformedValueException malformed(String why) {
    return new VersionedValue.MalformedValueException(AckWheelTopology.DEVICE_STORE + " value: " + why);
  }
}
