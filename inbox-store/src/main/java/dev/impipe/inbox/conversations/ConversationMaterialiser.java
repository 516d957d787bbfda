package dev.impipe.inbox.conversations;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.streams.WriteBackStore;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Keeps the conversation list of every user of its partition from their inbox entries (the shell around
 * {@link ConversationRules}): per entry one state read and change in memory (the unread index lives in the state;
 * the list order and the badge total are computed from the states, see {@link ConversationList}). The stores are
 * written back at checkpoints ({@link ListCheckpoints}): changed states reach RocksDB and the changelog once per
 * interval, and a task that starts applies the inbox entries after its checkpoint again in {@link #init}. Nothing
 * here expires with the inbox: a quiet conversation stays listed. With a totals store (notify's copy, which needs a
 * user's badge per notification without reading their list) it also keeps the user's {@link ConversationTotals}
 * there, changed when the badge changes.
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

    /** The checkpoints of the states (and totals): {@link ListCheckpoints}. */
    public String checkpoints() {
      return states + "-checkpoints";
    }
  }

  private final Stores names;
  private final ConversationsConfig cfg;
  private final ConversationOrders orders;
  private final InboxReplay replay;
  private ProcessorContext<Void, Void> context;
  private ListCheckpoints checkpoints;
  private int partition;
  private ConversationOrderCache cache;
  private WriteBackStore<ConversationState> states;
  private WriteBackStore<ConversationTotals> totals;

  /**
   * With the instance's order caches (this task's is opened in {@link #init} and closed in {@link #close}) and what
   * reads the inbox again after a restart ({@link ListCheckpoints}).
   */
  ConversationMaterialiser(Stores names, ConversationsConfig cfg, ConversationOrders orders, InboxReplay replay) {
    this.names = names;
    this.cfg = cfg;
    this.orders = orders;
    this.replay = replay;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    states = WriteBackStore.of(context.getStateStore(names.states()));
    totals = names.totals() == null ? null : WriteBackStore.of(context.getStateStore(names.totals()));
    checkpoints = new ListCheckpoints(context.getStateStore(names.checkpoints()),
        totals == null ? List.of(states) : List.of(states, totals), cfg.checkpointIntervalMs(),
        cfg.checkpointMaxPending(), context.currentSystemTimeMs());
    // A task initialised again (migrated back, or revived after an EOS rollback) gets a new, empty cache.
    partition = context.taskId().partition();
    cache = orders.open(partition);
    // The stores hold the states as of their last checkpoint: apply what came after it, up to the committed input.
    checkpoints.replay(replay, context.appConfigs(), context.applicationId() + "-" + names.states() + "-replay-"
        + context.taskId(), (offset, user, entry) -> apply(user, entry));
  }

  @Override
  public void close() {
    orders.close(partition, cache);
    cache = null;
  }

  @Override
  public void process(Record<String, InboxEntry> record) {
    apply(record.key(), record.value());
    context.recordMetadata().ifPresent(m -> checkpoints.applied(m.topic(), m.partition(), m.offset(),
        context.currentSystemTimeMs()));
  }

  private void apply(String user, InboxEntry e) {
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
    ConversationState before = states.value(key);
    Optional<ConversationRules.Step> step = ConversationRules.apply(before, e, user);
    if (step.isEmpty()) {
      return;
    }
    ConversationState after = ConversationRules.unread(step.get(), cfg.unreadTracked());
    if (after.equals(before)) {
      return; // a replay, or an entry that changes nothing: no write
    }
    states.write(key, after);
    ConversationOrder order = cache == null ? null : cache.cached(user);
    if (order != null) {
      order.move(new ConversationOrder.Position(ConversationKeys.order(user, after, conversation), conversation,
          ConversationRules.badge(after), ConversationRules.cappedInBadge(after)));
    }
    if (totals != null && (ConversationRules.badge(after) != ConversationRules.badge(before)
        || ConversationRules.cappedInBadge(after) != ConversationRules.cappedInBadge(before))) {
      Bytes totalKey = ConversationKeys.total(user);
      ConversationTotals total = totals.value(totalKey);
      ConversationTotals next = (total == null ? ConversationTotals.ZERO : total).plus(before, after);
      totals.write(totalKey, next.isZero() ? null : next);
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
    ConversationState before = states.value(key);
    ConversationRules.apply(before, e, timeline).map(step -> step.state().withIndex(UnreadIndex.EMPTY))
        .filter(after -> !after.equals(before)).ifPresent(after -> states.write(key, after));
  }
}
