package dev.impipe.inbox.internal;

import dev.impipe.avro.ChatMessage;
import dev.impipe.runtime.domain.HistoryKey;
import dev.impipe.runtime.streams.RejectedRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import dev.impipe.runtime.streams.PunctuationBudget;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Materialises the history topic (what the fan-out accepted, key {@code conversationId|seq}) into the conversation
 * history store, key {@code id(conversationId) | seq}. A record replaces what the store holds at its seq (a recall's
 * overwrite removes the body); a tombstone removes it. Every record also raises the partition's applied conversation
 * seq ({@link #APPLIED_KEY} in the applied store), which a {@code minSeq} history read waits for: the fan-out writes a
 * record or a tombstone for every {@code im.messages} seq it processed.
 *
 * <p>The time index is written only when history expires ({@code IM_TIMELINE_RETENTION}); history kept forever needs
 * none, so nothing grows beside the history itself.
 */
public final class HistoryMaterialiser implements Processor<String, ChatMessage, Void, Void> {

  /** The key of the applied conversation seq in the applied store (one per task = per partition). */
  public static final Bytes APPLIED_KEY = Bytes.wrap("applied".getBytes(java.nio.charset.StandardCharsets.UTF_8));

  private static final byte[] PRESENT = new byte[0];

  private final String historyStore;
  private final String timeIndexStore;
  private final String appliedStore;
  private final long retentionMs;
  private final long sweepIntervalMs;
  private final boolean expires;
  private KeyValueStore<Bytes, ChatMessage> history;
  private KeyValueStore<Bytes, byte[]> timeIndex;
  private KeyValueStore<Bytes, Long> applied;
  private ProcessorContext<Void, Void> sweepContext;
  private Cancellable catchUp;

  public HistoryMaterialiser(String historyStore, String timeIndexStore, String appliedStore, long retentionMs,
      long sweepIntervalMs, boolean expires) {
    this.historyStore = historyStore;
    this.timeIndexStore = timeIndexStore;
    this.appliedStore = appliedStore;
    this.retentionMs = retentionMs;
    this.sweepIntervalMs = sweepIntervalMs;
    this.expires = expires;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.history = context.getStateStore(historyStore);
    this.timeIndex = context.getStateStore(timeIndexStore);
    this.applied = context.getStateStore(appliedStore);
    if (expires) {
      sweepContext = context;
      context.schedule(Duration.ofMillis(sweepIntervalMs), PunctuationType.WALL_CLOCK_TIME, this::sweep);
    }
  }

  @Override
  public void process(Record<String, ChatMessage> record) {
    if (record.key() == null) {
      throw RejectedRecord.invalid("history record without key: the key must be conversationId|seq");
    }
    String conversation;
    long seq;
    try {
      conversation = HistoryKey.conversation(record.key());
      seq = HistoryKey.seq(record.key());
    } catch (IllegalArgumentException e) {
      seq = -1;
      conversation = null;
    }
    if (seq < 0) {
      throw RejectedRecord.invalid("history key '" + record.key() + "' is not conversationId|seq");
    }
    Bytes key = StoreKeys.entry(conversation, seq);
    ChatMessage message = record.value();
    if (message == null) {
      history.delete(key);
    } else {
      if (!conversation.equals(message.getConversationId())) {
        throw RejectedRecord.invalid("history key '" + record.key() + "' is not of the value's conversation '"
            + message.getConversationId() + "'");
      }
      history.put(key, message);
      if (expires) {
        timeIndex.put(StoreKeys.timeIndex(record.timestamp(), key), PRESENT);
      }
    }
    // After the data: a reader that sees the applied seq sees the entry.
    Long before = applied.get(APPLIED_KEY);
    if (before == null || before < seq) {
      applied.put(APPLIED_KEY, seq);
    }
  }

  /** Bounded by the thread's share of {@link TimelineMaterialiser#SWEEPS}; a catch-up run drains the rest. */
  private void sweep(long now) {
    long cutoff = now - retentionMs;
    boolean more = false;
    if (cutoff > 0) {
      try (PunctuationBudget.Lease lease = TimelineMaterialiser.SWEEPS.lease(now)) {
        more = sweep(cutoff, lease);
      }
    }
    if (more && catchUp == null) {
      catchUp = sweepContext.schedule(Duration.ofMillis(Math.min(TimelineMaterialiser.CATCH_UP_MS,
          sweepIntervalMs)), PunctuationType.WALL_CLOCK_TIME, this::sweep);
    } else if (!more && catchUp != null) {
      catchUp.cancel();
      catchUp = null;
    }
  }

  private boolean sweep(long cutoff, PunctuationBudget.Lease lease) {
    while (true) {
      List<Bytes> expired = new ArrayList<>(TimelineMaterialiser.SWEEP_BATCH);
      try (KeyValueIterator<Bytes, byte[]> it = timeIndex.range(StoreKeys.timeIndexStart(),
          StoreKeys.timeIndexBefore(cutoff))) {
        while (it.hasNext() && expired.size() < TimelineMaterialiser.SWEEP_BATCH) {
          expired.add(it.next().key);
        }
      }
      for (Bytes index : expired) {
        if (!lease.take(2)) {
          return true;
        }
        timeIndex.delete(index);
        history.delete(StoreKeys.timeIndexEntry(index));
      }
      if (expired.size() < TimelineMaterialiser.SWEEP_BATCH) {
        return false;
      }
    }
  }
}
