package dev.impipe.inbox.conversations;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.runtime.domain.Ids;
import java.util.Optional;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps the conversation list of every user of its partition from their inbox entries (the shell around
 * {@link ConversationRules}): per entry one state read and write (the unread index lives in the state; the list
 * order and the badge total are computed from the states, see {@link ConversationList}). The store is cached
 * ({@link ConversationTopology}): repeated updates of one key within a commit are one write. Nothing here expires
 * with the inbox: a quiet conversation stays listed. With a totals store (notify's copy, which needs a user's badge
 * per notification without reading their list) it also keeps the user's {@link ConversationTotals} there, written
 * when the badge changes.
 *
 * <p>It also keeps its task's in-memory list order ({@link ConversationOrderCache}, not a store) for users whose list
 * was requested here: created empty in {@link #init}, dropped in {@link #close}; a state write of such a user moves
 * the conversation to its new position with its badge, of any other user it costs one hash lookup.
 *
 * <p>Sees the same records as the inbox materialiser and ignores what that one rejects (no key, no value, a key that
 * is not the userId). Of a large group's timeline ({@code #groupId}) it keeps only the last message.
 */
public final class ConversationMaterialiser implements Processor<String, InboxEntry, Void, Void> {

  /**
   * The stores, by name.
   *
   * @param totals null: no totals store (the inbox store's list sums the badge from the states it reads)
   */
  public record Stores(String states, String totals) {

    /** Only the states. */
    public Stores(String states) {
      this(states, null);
    }
  }

  private final Stores names;
  private final int unreadTracked;
  private final ConversationOrders orders;
  private int partition;
  private ConversationOrderCache cache;
  private KeyValueStore<Bytes, byte[]> states;
  private KeyValueStore<Bytes, byte[]> totals;

  public ConversationMaterialiser(Stores names, int unreadTracked) {
    this(names, unreadTracked, ConversationOrders.NONE);
  }

  /** With the instance's order caches: this task's is opened in {@link #init} and closed in {@link #close}. */
  public ConversationMaterialiser(Stores names, int unreadTracked, ConversationOrders orders) {
    this.names = names;
    this.unreadTracked = unreadTracked;
    this.orders = orders;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    states = context.getStateStore(names.states());
    totals = names.totals() == null ? null : context.getStateStore(names.totals());
    // A task initialised again (migrated back, or revived after an EOS rollback) gets a new, empty cache.
    partition = context.taskId().partition();
    cache = orders.open(partition);
  }

  @Override
  public void close() {
    orders.close(partition, cache);
    cache = null;
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
    ConversationState after = ConversationRules.unread(step.get(), unreadTracked);
    if (after.equals(before)) {
      return; // a replay, or an entry that changes nothing: no write
    }
    states.put(key, after.encode());
    ConversationOrder order = cache == null ? null : cache.cached(user);
    if (order != null) {
      order.move(new ConversationOrder.Position(ConversationKeys.order(user, after, conversation), conversation,
          ConversationRules.badge(after), ConversationRules.cappedInBadge(after)));
    }
    if (totals != null && (ConversationRules.badge(after) != ConversationRules.badge(before)
        || ConversationRules.cappedInBadge(after) != ConversationRules.cappedInBadge(before))) {
      Bytes totalKey = ConversationKeys.total(user);
      byte[] raw = totals.get(totalKey);
      ConversationTotals next = (raw == null ? ConversationTotals.ZERO : ConversationTotals.decode(raw))
          .plus(before, after);
      if (next.isZero()) {
        totals.delete(totalKey);
      } else {
        totals.put(totalKey, next.encode());
      }
    }
  }

  /**
   * A large group's timeline: only its last message is kept (once per group, under the timeline's key), no unread
   * index or total: members count from the timeline itself (see {@link LargeGroupCounts}).
   */
  private void timeline(String timeline, InboxEntry e) {
    if (e.getType() != InboxEntryType.MESSAGE && e.getType() != InboxEntryType.RECALL) {
      return;
    }
    Bytes key = ConversationKeys.state(timeline, e.getConversationId());
    byte[] stored = states.get(key);
    ConversationState before = stored == null ? null : ConversationState.decode(stored);
    ConversationRules.apply(before, e, timeline).map(step -> step.state().withIndex(UnreadIndex.EMPTY))
        .filter(after -> !after.equals(before)).ifPresent(after -> states.put(key, after.encode()));
  }
}
