package dev.impipe.inbox.conversations;

import dev.impipe.avro.InboxEntry;
import dev.impipe.runtime.domain.Ids;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps the conversation list of every user of its partition from their inbox entries (the shell around
 * {@link ConversationRules}): per entry one state read and write, at most one order-index move and one total
 * update, and for the unread index one put (a message), the removal of what a read marker passes (each message is
 * removed once), or a scan of the conversation's indexed unread messages (a recall, rare). Nothing here expires with
 * the inbox: a quiet conversation stays listed.
 *
 * <p>Sees the same records as the inbox materialiser and ignores what that one rejects (no key, no value, a key that
 * is not the userId). Of a large group's timeline ({@code #groupId}) it keeps only the last message.
 */
public final class ConversationMaterialiser implements Processor<String, InboxEntry, Void, Void> {

  /** The stores, by name. */
  public record Stores(String states, String order, String unread, String totals) {}

  private final Stores names;
  private final int unreadTracked;
  private KeyValueStore<Bytes, byte[]> states;
  private KeyValueStore<Bytes, byte[]> order;
  private KeyValueStore<Bytes, byte[]> unread;
  private KeyValueStore<Bytes, Long> totals;

  public ConversationMaterialiser(Stores names, int unreadTracked) {
    this.names = names;
    this.unreadTracked = unreadTracked;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    states = context.getStateStore(names.states());
    order = context.getStateStore(names.order());
    unread = context.getStateStore(names.unread());
    totals = context.getStateStore(names.totals());
  }

  @Override
  public void process(Record<String, InboxEntry> record) {
    InboxEntry e = record.value();
    String user = record.key();
    if (e == null || user == null || !user.equals(e.getUserId()) || e.getType() == null
        || e.getConversationId() == null || e.getTimestamp() == null) {
      return;
    }
    if (Ids.isGroupTimeline(user)) {
      timeline(user, e);
      return;
    }
    String conversation = e.getConversationId();
    Bytes key = ConversationKeys.state(user, conversation);
    byte[] stored = states.get(key);
    ConversationState before = stored == null ? null : ConversationState.decode(stored);
    Optional<ConversationRules.Step> step = ConversationRules.apply(before, e, user);
    if (step.isEmpty()) {
      return;
    }
    ConversationState after = applyUnread(user, conversation, step.get());
    states.put(key, after.encode());
    if (before == null || before.pinned() != after.pinned() || before.activityAt() != after.activityAt()) {
      if (before != null) {
        order.delete(ConversationKeys.order(user, before, conversation));
      }
      order.put(ConversationKeys.order(user, after, conversation), new byte[0]);
    }
    long delta = ConversationRules.badge(after) - ConversationRules.badge(before);
    if (delta != 0) {
      Bytes totalKey = ConversationKeys.total(user);
      Long total = totals.get(totalKey);
      long next = Math.max(0, (total == null ? 0 : total) + delta);
      if (next == 0) {
        totals.delete(totalKey);
      } else {
        totals.put(totalKey, next);
      }
    }
  }

  /**
   * A large group's timeline: only its last message is kept (once per group, under the timeline's key), no unread
   * index, order or total: members count from the timeline itself (see {@link LargeGroupCounts}).
   */
  private void timeline(String timeline, InboxEntry e) {
    if (e.getType() != dev.impipe.avro.InboxEntryType.MESSAGE
        && e.getType() != dev.impipe.avro.InboxEntryType.RECALL) {
      return;
    }
    Bytes key = ConversationKeys.state(timeline, e.getConversationId());
    byte[] stored = states.get(key);
    ConversationState before = stored == null ? null : ConversationState.decode(stored);
    ConversationRules.apply(before, e, timeline).ifPresent(step -> states.put(key, step.state().encode()));
  }

  private ConversationState applyUnread(String user, String conversation, ConversationRules.Step step) {
    ConversationState s = step.state();
    if (step.op() instanceof ConversationRules.UnreadOp.Track track) {
      Bytes key = ConversationKeys.unread(user, conversation, track.conversationSeq());
      if (unread.get(key) != null) {
        return s; // the same message again (a replayed entry): counted once
      }
      long evicted = -1;
      if (s.tracked() >= unreadTracked) {
        List<Bytes> oldest = keys(ConversationKeys.unreadFrom(user, conversation),
            ConversationKeys.unreadTo(user, conversation), 1);
        if (!oldest.isEmpty()) {
          unread.delete(oldest.get(0));
          evicted = seqOf(oldest.get(0));
        }
      }
      unread.put(key, track.messageId().getBytes(StandardCharsets.UTF_8));
      return ConversationRules.tracked(s, evicted);
    }
    if (step.op() instanceof ConversationRules.UnreadOp.ReadUpTo read) {
      List<Bytes> passed = keys(ConversationKeys.unreadFrom(user, conversation),
          ConversationKeys.unread(user, conversation, Math.max(0, read.upToSeq())), Integer.MAX_VALUE);
      passed.forEach(unread::delete);
      return ConversationRules.read(s, passed.size());
    }
    if (step.op() instanceof ConversationRules.UnreadOp.Recall recall) {
      byte[] id = recall.messageId().getBytes(StandardCharsets.UTF_8);
      Bytes found = null;
      try (KeyValueIterator<Bytes, byte[]> it = unread.range(ConversationKeys.unreadFrom(user, conversation),
          ConversationKeys.unreadTo(user, conversation))) {
        while (it.hasNext() && found == null) {
          KeyValue<Bytes, byte[]> next = it.next();
          if (java.util.Arrays.equals(next.value, id)) {
            found = next.key;
          }
        }
      }
      if (found == null) {
        return s; // read already, never counted (own, or before the marker), or beyond the index
      }
      unread.delete(found);
      return ConversationRules.recalled(s, 1);
    }
    return s;
  }

  private List<Bytes> keys(Bytes from, Bytes to, int max) {
    List<Bytes> out = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> it = unread.range(from, to)) {
      while (it.hasNext() && out.size() < max) {
        out.add(it.next().key);
      }
    }
    return out;
  }

  private static long seqOf(Bytes unreadKey) {
    dev.impipe.runtime.streams.OrderedKey.Reader r = dev.impipe.runtime.streams.OrderedKey.read(unreadKey);
    r.string();
    r.string();
    return r.int64();
  }
}
