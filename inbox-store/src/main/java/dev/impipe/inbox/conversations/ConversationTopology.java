package dev.impipe.inbox.conversations;

import dev.impipe.runtime.streams.VersionedValue;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

/**
 * The conversation list's part of the inbox store topology: one more child of the {@code im.inbox} source (so a
 * user's list lives in the task of their inbox and cursors) and its stores. Key layouts: {@link ConversationKeys}.
 */
public final class ConversationTopology {

  public static final String PROCESSOR = "conversation-materialiser";
  /** Per user and conversation: {@link ConversationState} (versioned bytes). Queried. */
  public static final String STATES_STORE = "conversations";
  /** The list order per user (pinned, then recent activity), empty values. Queried. */
  public static final String ORDER_STORE = "conversation-order";
  /** Indexed unread messages per user and conversation, value the messageId. */
  public static final String UNREAD_STORE = "conversation-unread";
  /** The badge total per user ({@code [version 1] int64}): unread of the conversations not muted. Queried. */
  public static final String TOTALS_STORE = "conversation-unread-totals";

  private ConversationTopology() {}

  /**
   * Adds the processor under {@code inboxSource}. Call it before the other children of the source are added:
   * children run in the order added, so when the inbox store has applied an offset (what {@code minSeq} checks)
   * the list has applied it too.
   */
  public static void addTo(Topology topology, String inboxSource, ConversationsConfig cfg) {
    ConversationMaterialiser.Stores stores = new ConversationMaterialiser.Stores(STATES_STORE, ORDER_STORE,
        UNREAD_STORE, TOTALS_STORE);
    topology.addProcessor(PROCESSOR, () -> new ConversationMaterialiser(stores, cfg.unreadTracked()), inboxSource);
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(STATES_STORE), Serdes.Bytes(),
        Serdes.ByteArray()).withCachingDisabled(), PROCESSOR);
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(ORDER_STORE), Serdes.Bytes(),
        Serdes.ByteArray()).withCachingDisabled(), PROCESSOR);
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(UNREAD_STORE), Serdes.Bytes(),
        Serdes.ByteArray()), PROCESSOR);
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(TOTALS_STORE), Serdes.Bytes(),
        VersionedValue.longSerde(TOTALS_STORE)).withCachingDisabled(), PROCESSOR);
  }
}
