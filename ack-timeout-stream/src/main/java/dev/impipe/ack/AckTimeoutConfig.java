package dev.impipe.ack;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.runtime.config.Setting;
import java.time.Duration;
import java.util.Map;

/**
 * Settings of the ACK-timeout wheel, built from the environment by {@link #fromEnv(Map)}, a pure function.
 *
 * @param tick how late a timeout may fire: the wheel has four slots per tick, one punctuation round per slot
 * @param timeout how long a pushed seq may stay unACKed
 * @param maxAttempts pushes per seq before the final timeout; 1 = no retries (each earlier expiry emits a
 *     redelivery request)
 * @param maxEntriesPerPunctuation most pending seqs the punctuations of one stream thread expire per commit window
 *     (all its tasks together: one transaction); the rest follow in catch-up rounds
 * @param catchUpInterval how soon the next round runs while a backlog of overdue entries remains
 * @param streamThreads Kafka Streams threads of the app
 * @param inputGrace while the ACK input lags, a slot waits until ACKs up to its end have been read; an input that
 *     processes nothing for this long no longer holds it (a stuck input cannot stop timeouts for ever), one being
 *     processed holds it however far behind (when the broker tells the end offsets: {@code InputMarks})
 * @param ackedRetention how long a device's record with nothing pending (its highest ACK) is kept after it was last
 *     ACKed: it only has to outlive a Delivery record written late (after its ACK), which takes seconds
 * @param maxPendingPerDevice most seqs one device may have waiting for their ACK; a Delivery that would go over is
 *     rejected (im.rejected), which also bounds the size of a device's record and of one AckTimeout
 * @param storeCache whether the Streams record cache sits in front of the wheel's device store (a recent device's
 *     record is read from the heap; repeated updates of one device within a commit reach RocksDB and the changelog
 *     once)
 */
public record AckTimeoutConfig(
    Duration tick,
    Duration timeout,
    int maxAttempts,
    int maxEntriesPerPunctuation,
    Duration catchUpInterval,
    int streamThreads,
    Duration inputGrace,
    Duration ackedRetention,
    int maxPendingPerDevice,
    boolean storeCache) {

  public static final String IM_ACK_TICK = "IM_ACK_TICK";
  public static final String IM_ACK_TIMEOUT = "IM_ACK_TIMEOUT";
  public static final String IM_ACK_MAX_ATTEMPTS = "IM_ACK_MAX_ATTEMPTS";
  public static final String IM_ACK_MAX_ENTRIES_PER_PUNCTUATION = "IM_ACK_MAX_ENTRIES_PER_PUNCTUATION";
  public static final String IM_ACK_CATCHUP_INTERVAL = "IM_ACK_CATCHUP_INTERVAL";
  public static final String IM_ACK_STREAM_THREADS = "IM_ACK_STREAM_THREADS";
  public static final String IM_ACK_INPUT_GRACE = "IM_ACK_INPUT_GRACE";
  public static final String IM_ACK_ACKED_RETENTION = "IM_ACK_ACKED_RETENTION";
  public static final String IM_ACK_MAX_PENDING_PER_DEVICE = "IM_ACK_MAX_PENDING_PER_DEVICE";
  public static final String IM_ACK_STORE_CACHE = "IM_ACK_STORE_CACHE";

  /** The catch-up interval unless set: 10 ms, at most the tick. */
  public static final long DEFAULT_CATCHUP_INTERVAL_MS = 10;

  public static final Setting<Duration> TICK = Setting.duration(IM_ACK_TICK, "1s", "10ms", "1h",
      "how late a timeout may fire: the wheel has 4 slots per tick and a punctuation round per slot");
  public static final Setting<Duration> TIMEOUT = Setting.duration(IM_ACK_TIMEOUT, "15s", "10ms", "7d",
      "time allowed for the ACK");
  public static final Setting<Integer> MAX_ATTEMPTS = Setting.integer(IM_ACK_MAX_ATTEMPTS, 1, 1, 100,
      "pushes per seq before the final timeout");
  public static final Setting<Integer> MAX_ENTRIES_PER_PUNCTUATION = Setting.integer(
      IM_ACK_MAX_ENTRIES_PER_PUNCTUATION, 10_000, 1, 10_000_000,
      "most pending seqs the wheels of one stream thread expire per commit window (all its tasks together)");
  public static final Setting<Duration> ACKED_RETENTION = Setting.duration(IM_ACK_ACKED_RETENTION, "10m", "1s", "7d",
      "a device's highest ACK is forgotten this long after its last ACK");
  public static final Setting<Duration> CATCHUP_INTERVAL = Setting.duration(IM_ACK_CATCHUP_INTERVAL, "1ms", "1h",
      "pause between rounds while overdue timers remain (at most `IM_ACK_TICK`)")
      .defaultDoc("`" + DEFAULT_CATCHUP_INTERVAL_MS + "ms`");
  public static final Setting<Integer> STREAM_THREADS = Setting.integer(IM_ACK_STREAM_THREADS, 1, 1, 64,
      "Streams threads");
  public static final Setting<Duration> INPUT_GRACE = Setting.duration(IM_ACK_INPUT_GRACE, "60s", "0", "1d",
      "while the ACK input lags, how long a timeout waits for an input that processes nothing (one being processed "
          + "holds it until read, however far behind)");

  public static final Setting<Integer> MAX_PENDING_PER_DEVICE = Setting.integer(IM_ACK_MAX_PENDING_PER_DEVICE, 5_000,
      1, 1_000_000, "most seqs one device may have waiting for their ACK; a Delivery beyond goes to im.rejected");
  public static final Setting<Boolean> STORE_CACHE = Setting.bool(IM_ACK_STORE_CACHE, false,
      "Streams record cache (64 MiB) in front of the wheel's device store: a recent device's record is read from "
          + "the heap, not RocksDB (less CPU per record at full speed); off by default: it costs ~130 MB of heap");

  public static final ConfigTable TABLE = ConfigTable.of("ack-timeout", TICK, TIMEOUT, MAX_ATTEMPTS,
      MAX_ENTRIES_PER_PUNCTUATION, ACKED_RETENTION, CATCHUP_INTERVAL, STREAM_THREADS, INPUT_GRACE,
      MAX_PENDING_PER_DEVICE, STORE_CACHE);

  /** The defaults: one slot per second, a 15 s timeout, no retries. */
  public static AckTimeoutConfig defaults() {
    return fromEnv(Map.of());
  }

  public AckTimeoutConfig {
    if (timeout.compareTo(tick) < 0) {
      throw new InvalidConfigException(IM_ACK_TIMEOUT + "=" + timeout.toMillis() + "ms is shorter than "
          + IM_ACK_TICK + "=" + tick.toMillis() + "ms");
    }
    if (catchUpInterval.compareTo(tick) > 0) {
      throw new InvalidConfigException(IM_ACK_CATCHUP_INTERVAL + "=" + catchUpInterval.toMillis()
          + "ms is longer than " + IM_ACK_TICK + "=" + tick.toMillis() + "ms");
    }
  }

  /** Reads the IM_ACK_* variables; throws {@link InvalidConfigException} naming the variable. */
  public static AckTimeoutConfig fromEnv(Map<String, String> environment) {
    ConfigValues values = TABLE.read(environment);
    Duration tick = values.get(TICK);
    Duration catchUp = values.optional(CATCHUP_INTERVAL)
        .orElse(Duration.ofMillis(Math.min(DEFAULT_CATCHUP_INTERVAL_MS, tick.toMillis())));
    return new AckTimeoutConfig(tick, values.get(TIMEOUT), values.get(MAX_ATTEMPTS),
        values.get(MAX_ENTRIES_PER_PUNCTUATION), catchUp, values.get(STREAM_THREADS), values.get(INPUT_GRACE),
        values.get(ACKED_RETENTION), values.get(MAX_PENDING_PER_DEVICE), values.get(STORE_CACHE));
  }

  /** A copy with another tick and timeout (tests). */
  public AckTimeoutConfig withTiming(Duration newTick, Duration newTimeout) {
    return new AckTimeoutConfig(newTick, newTimeout, maxAttempts, maxEntriesPerPunctuation,
        Duration.ofMillis(Math.min(catchUpInterval.toMillis(), newTick.toMillis())), streamThreads, inputGrace,
        ackedRetention, maxPendingPerDevice, storeCache);
  }

  /** A copy with another retry policy (tests). */
  public AckTimeoutConfig withMaxAttempts(int attempts) {
    return new AckTimeoutConfig(tick, timeout, attempts, maxEntriesPerPunctuation, catchUpInterval, streamThreads,
        inputGrace, ackedRetention, maxPendingPerDevice, storeCache);
  }

  /** A copy with another batch bound (tests). */
  public AckTimeoutConfig withMaxEntriesPerPunctuation(int entries) {
    return new AckTimeoutConfig(tick, timeout, maxAttempts, entries, catchUpInterval, streamThreads, inputGrace,
        ackedRetention, maxPendingPerDevice, storeCache);
  }

  /** A copy with another input grace (tests). */
  public AckTimeoutConfig withInputGrace(Duration grace) {
    return new AckTimeoutConfig(tick, timeout, maxAttempts, maxEntriesPerPunctuation, catchUpInterval, streamThreads,
        grace, ackedRetention, maxPendingPerDevice, storeCache);
  }

  /** A copy with another bound of pending seqs per device (tests). */
  public AckTimeoutConfig withMaxPendingPerDevice(int seqs) {
    return new AckTimeoutConfig(tick, timeout, maxAttempts, maxEntriesPerPunctuation, catchUpInterval, streamThreads,
        inputGrace, ackedRetention, seqs, storeCache);
  }

  /** A copy with the record cache on or off (tests). */
  public AckTimeoutConfig withStoreCache(boolean cache) {
    return new AckTimeoutConfig(tick, timeout, maxAttempts, maxEntriesPerPunctuation, catchUpInterval, streamThreads,
        inputGrace, ackedRetention, maxPendingPerDevice, cache);
  }

  /** A copy with another retention of device records with nothing pending (tests). */
  public AckTimeoutConfig withAckedRetention(Duration retention) {
    return new AckTimeoutConfig(tick, timeout, maxAttempts, maxEntriesPerPunctuation, catchUpInterval, streamThreads,
        inputGrace, retention, maxPendingPerDevice, storeCache);
  }

  /**
   * How far behind the wall clock the ACK input may be and still count as caught up, and how long without an ACK
   * counts as an idle input: one tick, at least a second (a poll cycle and a commit).
   */
  public long inputLagToleranceMs() {
    return Math.max(tick.toMillis(), 1_000);
  }

  /**
   * How long without any input record (delivery or ACK) a task's input counts as idle, so its slots expire by the
   * wall clock: 5 s (at least the lag tolerance, at most half the timeout). A delivery is itself input, so a seq
   * whose ACK never comes is idle long before its deadline: the timeout is not delayed by this.
   */
  public long inputIdleMs() {
    return Math.max(inputLagToleranceMs(), Math.min(timeout.toMillis() / 2, 5_000));
  }
}
