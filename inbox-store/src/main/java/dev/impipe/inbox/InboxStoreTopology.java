package dev.impipe.inbox;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.conversations.ConversationOrders;
import dev.impipe.inbox.conversations.ConversationTopology;
import dev.impipe.inbox.conversations.ConversationsConfig;
import dev.impipe.inbox.internal.CopyIndexMaterialiser;
import dev.impipe.inbox.internal.CursorMaterialiser;
import dev.impipe.inbox.internal.HistoryMaterialiser;
import dev.impipe.inbox.internal.LargeGroupMaterialiser;
import dev.impipe.inbox.internal.MembershipMaterialiser;
import dev.impipe.inbox.internal.RecallMaterialiser;
import dev.impipe.inbox.internal.TimelineMaterialiser;
import dev.impipe.runtime.streams.StoreSuppliers;
import dev.impipe.runtime.streams.StoredValues;
import dev.impipe.runtime.streams.VersionedValue;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.Topic;
import java.time.Duration;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * The inbox store topology: {@code im.inbox} into the per-user sync timeline, {@code im.device-cursors} into the
 * cursor store (same sub-topology, so a user's inbox and cursors live in one task, on one instance), and
 * the history topic (what the fan-out accepted of {@code im.messages}) into the per-conversation history. A pure
 * function of its configuration.
 */
public final class InboxStoreTopology {

  /** Streams application name; the application id is the topic prefix + this. */
  public static final String APP_NAME = "inbox-store";

  /**
   * Inbox entries: key {@code userId, seq}, value {@link InboxEntry} (Avro, with its schema id); seq = offset in
   * {@code im.inbox}. Key layouts of every store here: {@code StoreKeys}; values that are one number are
   * {@code [version 1] int64} ({@code VersionedValue.longSerde}).
   */
  public static final String INBOX_STORE = "inbox-entries";
  /**
   * Recall index: key {@code owner, messageId}, value the inbox seq of that MESSAGE entry (window store by
   * record time, segments dropped after the inbox retention). Lets a RECALL remove the body it withdraws.
   */
  public static final String RECALL_INDEX_STORE = "inbox-received-messages";
  /** Retention index of the inbox: key {@code timestamp, inbox key}, empty value. */
  public static final String INBOX_TIME_INDEX_STORE = "inbox-time-index";
  /** Stored inbox entries per user (for the per-user cap): key {@code userId}, value count. */
  public static final String INBOX_COUNT_STORE = "inbox-counts";
  /**
   * Device cursors: key {@code userId, deviceId}, value the committed seq; and each device's positions in large
   * groups' timelines, key {@code userId, deviceId, groupId} ({@code StoreKeys#groupPosition}; committed on
   * {@code im.device-cursors} as the device {@code <deviceId>#<groupId>}, see {@code SyncCursor#groupDevice}).
   */
  public static final String CURSOR_STORE = "device-cursors";
  /** When each device cursor was last committed: key as {@link #CURSOR_STORE}, value epoch ms (its retention). */
  public static final String CURSOR_COMMIT_STORE = "device-cursor-commits";
  /**
   * Large groups of each user: key {@code userId, groupId} ({@code StoreKeys#userGroup}), value the user's
   * read-diffused intervals of the group ({@code ReadIntervals}, versioned). Fed by the same im.inbox records, so it
   * lives in the user's task.
   */
  public static final String LARGE_GROUPS_STORE = "large-groups";
  /**
   * Copy index of a grown inbox (ADR 0014, Open 5): key {@code owner, prevGeneration, prevSeq}
   * ({@code StoreKeys#copied}), value the entry's seq in this generation, for every entry {@code bin/im inbox grow}
   * copied here (window store by record time, segments dropped after the inbox retention). Translates a cursor of
   * the previous generation that a client sends. Empty in generation 0; not carried by a grow (rebuilt from the
   * copied inbox's headers).
   */
  public static final String COPY_INDEX_STORE = "inbox-copied-positions";
  /**
   * Whether every copied entry of the partition is applied: key {@code StoreKeys#copyApplied}, value the offset of
   * the first entry written after the copy; absent until then.
   */
  public static final String COPY_APPLIED_STORE = "inbox-copy-applied";
  /**
   * History read access (see {@code HistoryAccess}): key {@code userId, groupId} ({@code StoreKeys#userGroup}), value
   * {@code [version 1] int64 fromSeq}, the conversation seq from which the user may read the group (their last join);
   * no key = not a member. Fed by the same im.inbox records (the user's task), not expired with the inbox.
   */
  public static final String MEMBERSHIPS_STORE = "conversation-memberships";
  /**
   * Conversation history: key {@code conversationId, seq}, value {@link ChatMessage}; seq = offset in
   * {@code im.messages}. Fed by the history topic (what the fan-out accepted, recalled bodies removed), never by
   * {@code im.messages} itself. (Before: {@code conversation-timeline}, every record of im.messages.)
   */
  public static final String TIMELINE_STORE = "conversation-history";
  /** Retention index of the conversation history; written only when history expires. */
  public static final String TIMELINE_TIME_INDEX_STORE = "conversation-history-time-index";
  /**
   * The highest conversation seq the history store of this partition has applied: key {@code "applied"}, value the
   * seq. A history read with {@code minSeq} waits for it.
   */
  public static final String HISTORY_APPLIED_STORE = "conversation-history-applied";

  public static final String INBOX_SOURCE = "inbox-source";
  public static final String CURSOR_SOURCE = "device-cursor-source";
  public static final String HISTORY_SOURCE = "history-source";
  public static final String INBOX_PROCESSOR = "inbox-materialiser";
  public static final String LARGE_GROUP_PROCESSOR = "large-group-materialiser";
  public static final String MEMBERSHIP_PROCESSOR = "membership-materialiser";
  public static final String RECALL_PROCESSOR = "recall-materialiser";
  public static final String COPY_INDEX_PROCESSOR = "copy-index-materialiser";
  public static final String CURSOR_PROCESSOR = "device-cursor-materialiser";
  public static final String TIMELINE_PROCESSOR = "conversation-timeline-materialiser";
  /** Where the inbox materialiser sends stored entries that no longer decode (the rejected topic). */
  public static final String INBOX_REJECTED_SINK = "inbox-rejected-sink";

  /** About 100 years: the retention of a window store that should never expire. */
  private static final long FOREVER_MS = Duration.ofDays(36_500).toMillis();

  private InboxStoreTopology() {}

  public static Topology build(ImTopics topics, InboxStoreConfig cfg) {
    return build(topics, cfg, ConversationsConfig.defaults());
  }

  /** The topology, with the conversation list's settings (no list order kept in memory). */
  public static Topology build(ImTopics topics, InboxStoreConfig cfg, ConversationsConfig conversations) {
    return build(topics, cfg, conversations, ConversationOrders.NONE);
  }

  /**
   * The topology, with the conversation list's settings; the list's processors keep {@code orders} (the in-memory
   * list order per task, read by the list route).
   */
  public static Topology build(ImTopics topics, InboxStoreConfig cfg, ConversationsConfig conversations,
      ConversationOrders orders) {
    Topic<String, InboxEntry> inbox = topics.inbox();
    Topic<String, DeviceCursor> cursors = topics.deviceCursors();
    Topic<String, ChatMessage> history = topics.history();
    Topology topology = new Topology();

    topology.addSource(INBOX_SOURCE, inbox.keySerde().deserializer(), inbox.valueSerde().deserializer(),
        inbox.name());
    // First child of the inbox source (see ConversationTopology#addTo); absent when the list is disabled.
    if (conversations.enabled()) {
      ConversationTopology.addTo(topology, INBOX_SOURCE, inbox, conversations, orders);
    }
    TimelineMaterialiser.Spec<InboxEntry> inboxSpec = TimelineMaterialiser.Spec.<InboxEntry>builder()
        .entryStore(INBOX_STORE).timeIndexStore(INBOX_TIME_INDEX_STORE).countStore(INBOX_COUNT_STORE)
        .owner(InboxEntry::getUserId, "userId")
        .retention(cfg.inboxRetentionMs(), cfg.retentionIntervalMs(), cfg.inboxExpires())
        .maxPerOwner(cfg.maxEntriesPerUser())
        .build();
    topology.addProcessor(INBOX_PROCESSOR, () -> new TimelineMaterialiser<>(inboxSpec, TimelineMaterialiser.SWEEPS,
        INBOX_REJECTED_SINK), INBOX_SOURCE);
    // Stored entries that no longer decode leave the store for the rejected topic, with their bytes.
    topology.addSink(INBOX_REJECTED_SINK, topics.rejected().name(), topics.rejected().keySerde().serializer(),
        topics.rejected().valueSerde().serializer(), INBOX_PROCESSOR);
    // A second child of the inbox source: it skips on its own what the inbox materialiser rejects (no key, no
    // value, a key that is not the userId), so a rejected record changes neither store.
    topology.addProcessor(LARGE_GROUP_PROCESSOR, () -> new LargeGroupMaterialiser(LARGE_GROUPS_STORE,
        cfg.inboxRetentionMs(), cfg.inboxExpires()), INBOX_SOURCE);
    topology.addProcessor(MEMBERSHIP_PROCESSOR, () -> new MembershipMaterialiser(MEMBERSHIPS_STORE), INBOX_SOURCE);
    // After the inbox materialiser (children run in the order added): the recalled entry is already stored.
    topology.addProcessor(RECALL_PROCESSOR, () -> new RecallMaterialiser(INBOX_STORE, RECALL_INDEX_STORE),
        INBOX_SOURCE);
    topology.addProcessor(COPY_INDEX_PROCESSOR, () -> new CopyIndexMaterialiser(COPY_INDEX_STORE,
        COPY_APPLIED_STORE), INBOX_SOURCE);
    topology.addSource(CURSOR_SOURCE, cursors.keySerde().deserializer(), cursors.valueSerde().deserializer(),
        cursors.name());
    // The cursor sweep spends the same per-thread budget as the inbox and history sweeps.
    topology.addProcessor(CURSOR_PROCESSOR, () -> new CursorMaterialiser(CURSOR_STORE, CURSOR_COMMIT_STORE,
        cfg.cursorRetentionMs(), cfg.retentionIntervalMs(), TimelineMaterialiser.SWEEPS), CURSOR_SOURCE);

    // Queried stores skip the record cache: reads see every write at once, and IQv2 position bounds (minSeq)
    // are checked against the store that holds the data.
    topology.addStateStore(queried(INBOX_STORE, StoredValues.quarantining(topics.valueSerde(InboxEntry.class))),
        INBOX_PROCESSOR, RECALL_PROCESSOR);
    // Segments expire with the inbox (effectively never when the inbox is kept forever, like the inbox itself).
    Duration indexRetention = recallIndexRetention(cfg);
    topology.addStateStore(Stores.windowStoreBuilder(StoreSuppliers.window(RECALL_INDEX_STORE, indexRetention,
        Duration.ofMillis(1), false), Serdes.Bytes(), VersionedValue.longSerde(RECALL_INDEX_STORE)), RECALL_PROCESSOR);
    // Expires like the recall index: with the copied entries, whose timestamps the copy kept.
    topology.addStateStore(Stores.windowStoreBuilder(StoreSuppliers.window(COPY_INDEX_STORE, indexRetention,
        Duration.ofMillis(1), false), Serdes.Bytes(), VersionedValue.longSerde(COPY_INDEX_STORE))
        .withCachingDisabled(), COPY_INDEX_PROCESSOR);
    topology.addStateStore(queried(COPY_APPLIED_STORE, VersionedValue.longSerde(COPY_APPLIED_STORE)),
        COPY_INDEX_PROCESSOR);
    topology.addStateStore(index(INBOX_TIME_INDEX_STORE), INBOX_PROCESSOR);
    topology.addStateStore(Stores.keyValueStoreBuilder(StoreSuppliers.keyValue(INBOX_COUNT_STORE),
        Serdes.Bytes(), VersionedValue.longSerde(INBOX_COUNT_STORE)), INBOX_PROCESSOR);
    // Connected to both processors on purpose: that puts im.inbox and im.device-cursors in one sub-topology, so
    // partition p of both is one task and a sync (cursor + inbox range) is answered by one instance.
    topology.addStateStore(queried(CURSOR_STORE, VersionedValue.longSerde(CURSOR_STORE)), CURSOR_PROCESSOR,
        INBOX_PROCESSOR);
    topology.addStateStore(Stores.keyValueStoreBuilder(StoreSuppliers.keyValue(CURSOR_COMMIT_STORE),
        Serdes.Bytes(), VersionedValue.longSerde(CURSOR_COMMIT_STORE)), CURSOR_PROCESSOR);
    topology.addStateStore(queried(LARGE_GROUPS_STORE, Serdes.ByteArray()), LARGE_GROUP_PROCESSOR);
    topology.addStateStore(queried(MEMBERSHIPS_STORE, Serdes.ByteArray()), MEMBERSHIP_PROCESSOR);

    topology.addSource(HISTORY_SOURCE, history.keySerde().deserializer(), history.valueSerde().deserializer(),
        history.name());
    topology.addProcessor(TIMELINE_PROCESSOR, () -> new HistoryMaterialiser(TIMELINE_STORE,
        TIMELINE_TIME_INDEX_STORE, HISTORY_APPLIED_STORE, cfg.timelineRetentionMs(), cfg.retentionIntervalMs(),
        cfg.timelineExpires()), HISTORY_SOURCE);
    topology.addStateStore(queried(TIMELINE_STORE, topics.valueSerde(ChatMessage.class)), TIMELINE_PROCESSOR);
    topology.addStateStore(index(TIMELINE_TIME_INDEX_STORE), TIMELINE_PROCESSOR);
    topology.addStateStore(queried(HISTORY_APPLIED_STORE, VersionedValue.longSerde(HISTORY_APPLIED_STORE)),
        TIMELINE_PROCESSOR);
    return topology;
  }

  /** The recall index's segments expire with the inbox; a 100-year window when the inbox is kept forever. */
  static Duration recallIndexRetention(InboxStoreConfig cfg) {
    return Duration.ofMillis(cfg.inboxExpires() ? cfg.inboxRetentionMs() : FOREVER_MS);
  }

  private static <V> StoreBuilder<KeyValueStore<Bytes, V>> queried(String name,
      org.apache.kafka.common.serialization.Serde<V> valueSerde) {
    return Stores.keyValueStoreBuilder(StoreSuppliers.keyValue(name), Serdes.Bytes(), valueSerde)
        .withCachingDisabled();
  }

  private static StoreBuilder<KeyValueStore<Bytes, byte[]>> index(String name) {
    return Stores.keyValueStoreBuilder(StoreSuppliers.keyValue(name), Serdes.Bytes(), Serdes.ByteArray());
  }
}
