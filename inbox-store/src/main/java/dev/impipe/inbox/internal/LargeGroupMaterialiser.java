package dev.impipe.inbox.internal;

import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.runtime.domain.Ids;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps, per user and group, the conversation-seq intervals in which the user reads the group from its timeline
 * ({@code #groupId}): fed by the user's CONVERSATION_JOINED / LEFT / MODE entries of groups. Unlike the inbox
 * entries these are not expired by the retention sweep (a user who joined a large group a month ago still syncs
 * it); only closed intervals older than the inbox retention are dropped, when the next event of that group comes.
 *
 * <p>Sees the same records as the inbox materialiser and ignores what that one rejects; entries without
 * {@code timelineFromSeq} (written before hybrid diffusion) carry no mode and change nothing; an entry at or below
 * the inbox seq the intervals already reflect ({@link ReadIntervals#through()}) is a replay and changes nothing.
 */
public final class LargeGroupMaterialiser implements Processor<String, InboxEntry, Void, Void> {

  private final String store;
  private final long retentionMs;
  private final boolean expires;
  private ProcessorContext<Void, Void> context;
  private KeyValueStore<Bytes, byte[]> groups;

  public LargeGroupMaterialiser(String store, long retentionMs, boolean expires) {
    this.store = store;
    this.retentionMs = retentionMs;
    this.expires = expires;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    this.groups = context.getStateStore(store);
  }

  @Override
  public void process(Record<String, InboxEntry> record) {
    InboxEntry e = record.value();
    if (e == null || record.key() == null || !record.key().equals(e.getUserId())
        || Ids.isGroupTimeline(record.key()) || Ids.isDirect(e.getConversationId())
        || e.getTimelineFromSeq() == null) {
      return;
    }
    boolean open;
    if (e.getType() == InboxEntryType.CONVERSATION_JOINED || e.getType() == InboxEntryType.CONVERSATION_MODE) {
      open = Boolean.TRUE.equals(e.getReadDiffusion());
    } else if (e.getType() == InboxEntryType.CONVERSATION_LEFT) {
      open = false;
    } else {
      return;
    }
    long inboxSeq = context.recordMetadata().orElseThrow(() -> new IllegalStateException("no record metadata"))
        .offset();
    Bytes key = StoreKeys.userGroup(e.getUserId(), e.getConversationId());
    ReadIntervals before = ReadIntervals.decode(groups.get(key));
    if (before.isEmpty() && !open) {
      return; // a small group: nothing to remember
    }
    if (inboxSeq <= before.through()) {
      // Applied already: a replay, e.g. of a grown inbox whose intervals were carried over (ADR 0014) with their
      // inbox seqs translated. Applied twice, a join would open an interval overlapping its own.
      return;
    }
    ReadIntervals after = before.apply(e.getTimelineFromSeq(), open, inboxSeq, record.timestamp());
    if (expires) {
      after = after.closedBefore(record.timestamp() - retentionMs);
    }
    if (after.isEmpty()) {
      groups.delete(key);
    } else {
      groups.put(key, after.encode());
    }
  }
}
