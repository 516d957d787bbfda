package dev.impipe.inbox.internal;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.streams.VersionedValue;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * History read access: per user and group, the conversation seq from which the user may read the group's history
 * (their last join), fed by the fan-out's CONVERSATION_JOINED / LEFT entries of groups in the user's inbox. A LEFT
 * deletes the key: a leaver reads nothing; a rejoin starts from the new join. Not expired with the inbox: one key
 * per current membership, so it cannot grow beyond the memberships that exist (its changelog keeps it beyond the
 * topic's retention).
 *
 * <p>Sees the same records as the inbox materialiser and ignores what that one rejects, group timelines
 * ({@code #g}) and direct chats (their two parties always read them).
 */
public final class MembershipMaterialiser implements Processor<String, InboxEntry, Void, Void> {

  private static final byte VERSION = 1;

  private final String store;
  private KeyValueStore<Bytes, byte[]> memberships;

  public MembershipMaterialiser(String store) {
    this.store = store;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.memberships = context.getStateStore(store);
  }

  @Override
  public void process(Record<String, InboxEntry> record) {
    InboxEntry e = record.value();
    if (e == null || record.key() == null || !record.key().equals(e.getUserId())
        || Ids.isGroupTimeline(record.key()) || Ids.isDirect(e.getConversationId())) {
      return;
    }
    Bytes key = StoreKeys.userGroup(e.getUserId(), e.getConversationId());
    if (e.getType() == InboxEntryType.CONVERSATION_JOINED) {
      // An entry from before the fan-out wrote join boundaries gives no safe start: nothing is readable then.
      long from = e.getTimelineFromSeq() == null ? Long.MAX_VALUE : Math.max(0, e.getTimelineFromSeq());
      memberships.put(key, encode(from));
    } else if (e.getType() == InboxEntryType.CONVERSATION_LEFT) {
      memberships.delete(key);
    }
  }

  /** The stored value for a member reading from conversation seq {@code fromSeq}. */
  public static byte[] encode(long fromSeq) {
    return VersionedValue.write(VERSION).int64(fromSeq).build();
  }

  /** The conversation seq a stored value lets its user read from. */
  public static long decode(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, "conversation-memberships", VERSION);
    long fromSeq = r.int64();
    r.end();
    return fromSeq;
  }
}
