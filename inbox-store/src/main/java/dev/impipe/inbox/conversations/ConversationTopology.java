package dev.impipe.inbox.conversations;

import dev.impipe.runtime.streams.StoreSuppliers;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.Stores;

/**
 * The conversation list's part of the inbox store topology: one more child of the {@code im.inbox} source (so a
 * user's list lives in the task of their inbox and cursors) and its stores. Key layouts: {@link ConversationKeys}.
 */
public final class ConversationTopology {

  public static final String PROCESSOR = "conversation-materialiser";
  /**
   * Per user and conversation: {@link ConversationState} (versioned bytes, with the unread index). Queried. Named
   * apart from version 1's {@code conversations} store (state format 2: a reset, rebuilt from what
   * the inbox topic still holds).
   */
  public static final String STATES_STORE = "conversation-states";

  private ConversationTopology() {}

  /**
   * Adds the processor under {@code inboxSource}. Call it before the other children of the source are added:
   * children run in the order added, so when the inbox store has applied an offset (what {@code minSeq} checks)
   * the list has applied it too.
   */
  public static void addTo(Topology topology, String inboxSource, ConversationsConfig cfg) {
    addTo(topology, inboxSource, cfg, ConversationOrders.NONE);
  }

  /** As {@link #addTo(Topology, String, ConversationsConfig)}, the processor keeping {@code orders} (list pages). */
  public static void addTo(Topology topology, String inboxSource, ConversationsConfig cfg,
      ConversationOrders orders) {
    addTo(topology, PROCESSOR, inboxSource, new ConversationMaterialiser.Stores(STATES_STORE), cfg, orders);
  }

  /**
   * Adds a materialiser named {@code processor} under {@code inboxSource} with its stores, cached: repeated updates
   * of a key within a commit (a busy conversation's state, a user's totals) reach RocksDB and the changelog once.
   * The inbox store's list has no totals store: its badge is summed from the states a page reads (ADR 0012).
   */
  public static void addTo(Topology topology, String processor, String inboxSource,
      ConversationMaterialiser.Stores stores, ConversationsConfig cfg) {
    addTo(topology, processor, inboxSource, stores, cfg, ConversationOrders.NONE);
  }

  private static void addTo(Topology topology, String processor, String inboxSource,
      ConversationMaterialiser.Stores stores, ConversationsConfig cfg, ConversationOrders orders) {
    topology.addProcessor(processor, () -> new ConversationMaterialiser(stores, cfg.unreadTracked(), orders),
        inboxSource);
    for (String store : new String[] {stores.states(), stores.totals()}) {
      if (store == null) {
        continue;
      }
      topology.addStateStore(Stores.keyValueStoreBuilder(StoreSuppliers.keyValue(store), Serdes.Bytes(),
          Serdes.ByteArray()).withCachingEnabled(), processor);
    }
  }
}
