package dev.impipe.notify.decide;

import dev.impipe.avro.Notification;
import dev.impipe.avro.PushRegistration;
import dev.impipe.inbox.conversations.ConversationMaterialiser;
import dev.impipe.inbox.conversations.ConversationOrders;
import dev.impipe.inbox.conversations.ConversationTopology;
import dev.impipe.inbox.conversations.ConversationsConfig;
import dev.impipe.notify.NotifyConfig;
import dev.impipe.runtime.streams.InputLag;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.StoreSuppliers;
import dev.impipe.runtime.streams.StoredValues;
import dev.impipe.runtime.streams.StreamThreadConsumers;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.Topic;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

/**
 * The deciding topology of notifications: {@code im.inbox}, {@code im.acks}, {@code im.device-cursors} and
 * {@code im.push-registrations} (all keyed and co-partitioned by user id) into the conversation list's materialiser
 * (own copies of its stores: muted and the badge at decision time) and the {@link NotifyProcessor}, out to
 * {@code im.notifications} (and {@code im.rejected} for stored entries that do not decode). Byte layouts:
 * {@link NotifyKeys}, {@link PendingBurst}.
 */
public final class NotifyTopology {

  public static final String INBOX_SOURCE = "notify-inbox-source";
  public static final String ACKS_SOURCE = "notify-acks-source";
  public static final String CURSORS_SOURCE = "notify-cursors-source";
  public static final String REGISTRATIONS_SOURCE = "notify-registrations-source";
  /** The conversation list's rules, on this app's own stores. */
  public static final String CONVERSATIONS_PROCESSOR = "notify-conversation-materialiser";
  public static final String DECIDER = "notify-decider";
  public static final String NOTIFICATIONS_SINK = "notify-notifications-sink";
  public static final String REJECTED_SINK = "notify-rejected-sink";

  /**
   * {@code userId|deviceId} ({@link RegistrationKeys#key}) -> the device's {@link PushRegistration}: the newest
   * registration of each device, removed by a removal naming its registrationId. Queried (interactive queries).
   */
  public static final String REGISTRATIONS_STORE = "notify-registrations";
  /** {@code userId, deviceId -> [version 1] int64 seq}: the highest inbox seq the device received (ACK or cursor). */
  public static final String RECEIVED_STORE = "notify-received";
  /** {@code userId, deviceId, conversationId -> PendingBurst}: what the device will be notified about, and when. */
  public static final String PENDING_STORE = "notify-pending";
  /** {@code due, userId, deviceId, conversationId -> empty}: the pending bursts by due time, scanned oldest first. */
  public static final String DUE_STORE = "notify-due";
  /**
   * The conversation list's stores of this app (layouts: {@code ConversationKeys}, {@code ConversationState}; state
   * format 2, named apart from format 1's {@code notify-conversations}, {@code -order}, {@code -unread} and
   * {@code -totals}; no order store: the decider needs no list order).
   */
  public static final String CONVERSATIONS_STORE = "notify-conversation-states";
  /** The badge per user: {@code ConversationTotals} (unread of the conversations not muted). */
  public static final String CONVERSATION_TOTALS_STORE = "notify-conversation-user-totals";

  /** Time the deciders of one stream thread may spend per window (a safety net far under the transaction timeout). */
  static final long MAX_MS_PER_WINDOW = 1_000;

  private NotifyTopology() {}

  /** The topology for {@code topics} and {@code cfg}; meters go to {@code metrics}. */
  public static Topology build(ImTopics topics, NotifyConfig cfg, ConversationsConfig conversations,
      NotifyMetrics metrics) {
    // One budget for the deciders of all tasks of a stream thread: at most maxEntriesPerPunctuation decisions per
    // commit window (one transaction), whatever the number of tasks.
    // The app sets StreamThreadConsumers as its client supplier (NotifyComponent), so the deciders learn when a
    // start's backlog is fetched.
    return build(topics, cfg, conversations, metrics, new PunctuationBudget(cfg.maxEntriesPerPunctuation(),
        MAX_MS_PER_WINDOW, PunctuationBudget.DEFAULT_WINDOW_MS), StreamThreadConsumers.LAG);
  }

  /**
   * With a given decision budget and input lag source (tests: a TopologyTestDriver has no consumer to ask, and
   * {@link InputLag#UNKNOWN} holds the idle rule for {@link InputHorizon#BACKLOG_WAIT_MS} after a start).
   */
  static Topology build(ImTopics topics, NotifyConfig cfg, ConversationsConfig conversations, NotifyMetrics metrics,
      PunctuationBudget budget, InputLag inputLag) {
    Topology topology = new Topology();
    addSource(topology, INBOX_SOURCE, topics.inbox());
    addSource(topology, ACKS_SOURCE, topics.acks());
    addSource(topology, CURSORS_SOURCE, topics.deviceCursors());
    addSource(topology, REGISTRATIONS_SOURCE, topics.pushRegistrations());

    // First child of the inbox source: when the decider sees an entry, the list has applied it (children run in
    // the order added), so muted and the badge are those after the entry.
    ConversationTopology.addTo(topology, CONVERSATIONS_PROCESSOR, INBOX_SOURCE, topics.inbox(),
        new ConversationMaterialiser.Stores(CONVERSATIONS_STORE, CONVERSATION_TOTALS_STORE), conversations,
        ConversationOrders.NONE);

    Topic<String, Notification> notifications = topics.notifications();
    List<String> inputs = List.of(topics.inbox().name(), topics.acks().name(), topics.deviceCursors().name(),
        topics.pushRegistrations().name());
    BacklogProbe backlog = new BacklogProbe(inputs, inputLag);
    topology.addProcessor(DECIDER, () -> new NotifyProcessor(cfg, metrics, budget, backlog),
        INBOX_SOURCE, ACKS_SOURCE, CURSORS_SOURCE, REGISTRATIONS_SOURCE);
    topology.connectProcessorAndStateStores(DECIDER, CONVERSATIONS_STORE, CONVERSATION_TOTALS_STORE);
    topology.addStateStore(Stores.keyValueStoreBuilder(
        StoreSuppliers.budgetedKeyValue(REGISTRATIONS_STORE), Serdes.String(),
        StoredValues.quarantining(topics.pushRegistrations().valueSerde())), DECIDER);
    for (String store : new String[] {RECEIVED_STORE, PENDING_STORE, DUE_STORE}) {
      topology.addStateStore(Stores.keyValueStoreBuilder(
          StoreSuppliers.budgetedKeyValue(store), Serdes.Bytes(), Serdes.ByteArray()),
          DECIDER);
    }
    topology.addSink(NOTIFICATIONS_SINK, notifications.name(), notifications.keySerde().serializer(),
        notifications.valueSerde().serializer(), DECIDER);
    topology.addSink(REJECTED_SINK, topics.rejected().name(), topics.rejected().keySerde().serializer(),
        topics.rejected().valueSerde().serializer(), DECIDER);
    return topology;
  }

  private static <V> void addSource(Topology topology, String name, Topic<String, V> topic) {
    topology.addSource(name, topic.keySerde().deserializer(), topic.valueSerde().deserializer(), topic.name());
  }
}
