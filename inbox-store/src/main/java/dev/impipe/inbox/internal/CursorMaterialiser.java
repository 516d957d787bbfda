package dev.impipe.inbox.internal;

import dev.impipe.avro.DeviceCursor;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.RejectedRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * Applies cursor commits of {@code im.device-cursors} to the cursor store; a cursor only moves forward. Each commit
 * also records when it was made (the record's timestamp) in a second store under the same key.
 *
 * <p>Retention: a cursor (a device's inbox position, or its position in a large group's timeline, committed as
 * device id {@code device#group} and stored as its own key kind, {@link StoreKeys#groupPosition}) not committed for the retention is removed by a rolling scan, a slice per punctuation
 * within the thread's {@link PunctuationBudget} (shared with the inbox retention sweep); while a pass is not
 * finished a catch-up punctuation runs every {@link TimelineMaterialiser#CATCH_UP_MS}, and a new pass starts at
 * most once per retention/10. A cursor stored before commit times were kept gets the time of the pass that first
 * sees it (it ages from then). Deleting from the store also tombstones its changelog.
 */
public final class CursorMaterialiser implements Processor<String, DeviceCursor, Void, Void> {

  /** Most cursor keys one punctuation looks at. */
  static final int SCAN_PER_RUN = 10_000;

  private final String cursorStore;
  private final String commitTimeStore;
  private final long retentionMs;
  private final long sweepIntervalMs;
  private final PunctuationBudget budget;
  private ProcessorContext<Void, Void> context;
  private KeyValueStore<Bytes, Long> cursors;
  private KeyValueStore<Bytes, Long> committedAt;
  private Cancellable catchUp;
  /** Where the rolling scan goes on (null: start a pass), and when the last pass finished. */
  private Bytes scanFrom;
  private long scanDone = Long.MIN_VALUE;

  /**
   * @param commitTimeStore key as the cursor store, value the time of the last commit
   * @param retentionMs a cursor not committed for this long is removed; {@code Long.MAX_VALUE} keeps them (and
   *     records no commit times)
   * @param sweepIntervalMs how often the sweep runs (wall-clock time)
   * @param budget the thread's punctuation budget, shared with the other sweeps of the app
   */
  public CursorMaterialiser(String cursorStore, String commitTimeStore, long retentionMs, long sweepIntervalMs,
      PunctuationBudget budget) {
    this.cursorStore = cursorStore;
    this.commitTimeStore = commitTimeStore;
    this.retentionMs = retentionMs;
    this.sweepIntervalMs = sweepIntervalMs;
    this.budget = budget;
  }

  private boolean expires() {
    return retentionMs != Long.MAX_VALUE;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    cursors = context.getStateStore(cursorStore);
    if (expires()) {
      committedAt = context.getStateStore(commitTimeStore);
      // Wall-clock time: devices that went away stop the cursor input too, so stream time would stop with them.
      context.schedule(Duration.ofMillis(sweepIntervalMs), PunctuationType.WALL_CLOCK_TIME, this::sweep);
    }
  }

  @Override
  public void process(Record<String, DeviceCursor> record) {
    DeviceCursor cursor = record.value();
    if (record.key() == null || cursor == null) {
      throw RejectedRecord.invalid("cursor record needs a key (userId) and a value");
    }
    if (!record.key().equals(cursor.getUserId())) {
      throw RejectedRecord.invalid("key '" + record.key() + "' is not the userId of the cursor ('"
          + cursor.getUserId() + "')");
    }
    if (cursor.getSeq() < 0) {
      throw RejectedRecord.invalid("cursor seq must not be negative, got " + cursor.getSeq());
    }
    Bytes key = StoreKeys.committed(cursor.getUserId(), cursor.getDeviceId());
    Long current = cursors.get(key);
    // Commits can arrive out of order (two requests racing, a retried PUT): an older one never moves it back.
    if (current == null || cursor.getSeq() > current) {
      cursors.put(key, cursor.getSeq());
    }
    if (committedAt != null) {
      // Every commit keeps the device alive, even one that does not move its cursor; an older one never ages it.
      Long at = committedAt.get(key);
      if (at == null || record.timestamp() > at) {
        committedAt.put(key, record.timestamp());
      }
    }
  }

  private void sweep(long now) {
    boolean more;
    try (PunctuationBudget.Lease lease = budget.lease(now)) {
      more = sweep(now, lease);
    }
    if (more && catchUp == null) {
      catchUp = context.schedule(Duration.ofMillis(Math.min(TimelineMaterialiser.CATCH_UP_MS, sweepIntervalMs)),
          PunctuationType.WALL_CLOCK_TIME, this::sweep);
    } else if (!more && catchUp != null) {
      catchUp.cancel();
      catchUp = null;
    }
  }

  /** One slice of the rolling scan; true while the pass is not finished. */
  private boolean sweep(long now, PunctuationBudget.Lease lease) {
    if (scanFrom == null && scanDone != Long.MIN_VALUE && now - scanDone < retentionMs / 10) {
      return false;
    }
    List<Bytes> old = new ArrayList<>();
    List<Bytes> adopted = new ArrayList<>();
    Bytes last = null;
    boolean finished = true;
    try (KeyValueIterator<Bytes, Long> it = cursors.range(scanFrom, null)) {
      int seen = 0;
      while (it.hasNext()) {
        if (seen++ >= SCAN_PER_RUN) {
          finished = false;
          break;
        }
        KeyValue<Bytes, Long> kv = it.next();
        if (kv.key.equals(scanFrom)) {
          continue; // where the last slice stopped: looked at already
        }
        Long at = committedAt.get(kv.key);
        boolean expired = at != null && now - at >= retentionMs;
        if ((at == null || expired) && !lease.take(expired ? 2 : 1)) {
          finished = false;
          break;
        }
        last = kv.key;
        if (at == null) {
          adopted.add(kv.key);
        } else if (expired) {
          old.add(kv.key);
        }
      }
    }
    adopted.forEach(key -> committedAt.put(key, now));
    for (Bytes key : old) {
      cursors.delete(key);
      committedAt.delete(key);
    }
    if (finished) {
      scanFrom = null;
      scanDone = now;
    } else if (last != null) {
      scanFrom = last;
    }
    return !finished;
  }
}
