package dev.impipe.inbox.internal;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Removes a recalled message's body from its owner's stored copy, so no later sync serves it: on a RECALL entry of a
 * timeline owner (a user, or a large group's {@code #groupId}), the owner's MESSAGE entry of the recalled message is
 * rewritten without body and with {@code recalledBy} = the recall's messageId. ({@code im.inbox} keeps the record as
 * written; the store is what syncs read.)
 *
 * <p>Finding that entry: an index {@code owner, messageId -> [version] inbox seq} ({@code StoreKeys#received}),
 * written for every MESSAGE entry into a window store that drops its segments after the inbox retention (no sweep
 * needed). Sees the same records as the inbox materialiser, after it, and ignores what that one rejects.
 */
public final class RecallMaterialiser implements Processor<String, InboxEntry, Void, Void> {

  private final String inboxStore;
  private final String indexStore;
  private ProcessorContext<Void, Void> context;
  private KeyValueStore<Bytes, InboxEntry> inbox;
  private WindowStore<Bytes, Long> received;

  public RecallMaterialiser(String inboxStore, String indexStore) {
    this.inboxStore = inboxStore;
    this.indexStore = indexStore;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    this.inbox = context.getStateStore(inboxStore);
    this.received = context.getStateStore(indexStore);
  }

  @Override
  public void process(Record<String, InboxEntry> record) {
    InboxEntry e = record.value();
    if (e == null || record.key() == null || !record.key().equals(e.getUserId())) {
      return;
    }
    if (e.getType() == InboxEntryType.MESSAGE && e.getMessageId() != null) {
      long seq = context.recordMetadata().orElseThrow(() -> new IllegalStateException("no record metadata"))
          .offset();
      received.put(StoreKeys.received(e.getUserId(), e.getMessageId()), seq, record.timestamp());
    } else if (e.getType() == InboxEntryType.RECALL && e.getRefMessageId() != null) {
      Long seq = latest(StoreKeys.received(e.getUserId(), e.getRefMessageId()));
      if (seq == null) {
        return; // never received here, or expired with the inbox
      }
      Bytes key = StoreKeys.entry(e.getUserId(), seq);
      InboxEntry original = inbox.get(key);
      if (original != null && original.getType() == InboxEntryType.MESSAGE
          && e.getRefMessageId().equals(original.getMessageId()) && original.getRecalledBy() == null) {
        inbox.put(key, InboxEntry.newBuilder(original).setBody(null).setRecalledBy(e.getMessageId()).build());
      }
    }
  }

  private Long latest(Bytes key) {
    Long seq = null;
    try (WindowStoreIterator<Long> it = received.fetch(key, 0L, Long.MAX_VALUE)) {
      while (it.hasNext()) {
        seq = it.next().value;
      }
    }
    return seq;
  }
}
