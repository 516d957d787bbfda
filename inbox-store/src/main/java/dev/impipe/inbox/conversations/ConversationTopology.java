package dev.impipe.inbox.conversations;

import dev.impipe.avro.InboxEntry;
import dev.impipe.runtime.streams.StoreSuppliers;
import dev.impipe.runtime.streams.WriteBackStore;
import dev.impipe.runtime.streams.WriteBackStoreBuilder;
import dev.impipe.runtime.topics.Topic;
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

  private static final WriteBackStore.Codec<ConversationState> STATE_CODEC =
      new WriteBackStore.Codec<>(ConversationState::encode, ConversationState::decode);
  private static final WriteBackStore.Codec<ConversationTotals> TOTALS_CODEC =
      new WriteBackStore.Codec<>(ConversationTotals::encode, ConversationTotals::decode);

  private ConversationTopology() {}

  /**
   * A write-back store ({@link WriteBackStore}) over a logged, cached one: the processor's changes of a key between
   * two write-backs reach the record cache, RocksDB and the changelog once, encoded once. The write-back goes through
   * the record cache, whose flush (at the same commit) writes each state to the changelog with its record context.
   * Every key starts with the user: a user's changes are kept in key order apart from the others' (a page reads one
   * user's). Most reads below are of states the store does not hold yet (a new conversation, or one not changed for
   * an interval and let go): its memtables get a Bloom filter.
   */
  private static <V> WriteBackStoreBuilder<V> writeBack(String name, WriteBackStore.Codec<V> codec) {
    return new WriteBackStoreBuilder<>(
        Stores.keyValueStoreBuilder(StoreSuppliers.missReadKeyValue(name), Serdes.Bytes(),
            Serdes.ByteArray()).withCachingEnabled(),
        codec, true);
  }

  /**
   * Adds the processor under {@code inboxSource} (reading {@code inbox}) with {@link #STATES_STORE}, keeping
   * {@code orders} (list pages). Call it before the other children of the source are added: children run in the
   * order added, so when the inbox store has applied an offset (what {@code minSeq} checks) the list has applied it
   * too. The inbox store's list has no totals store: its badge is summed from the states a page reads (ADR 0012).
   */
  public static void addTo(Topology topology, String inboxSource, Topic<String, InboxEntry> inbox,
      ConversationsConfig cfg, ConversationOrders orders) {
    addTo(topology, PROCESSOR, inboxSource, inbox, new ConversationMaterialiser.Stores(STATES_STORE), cfg, orders);
  }

  /**
   * Adds a materialiser named {@code processor} under {@code inboxSource} with its stores: the states (and totals)
   * written back at checkpoints ({@link ListCheckpoints}) over logged stores, and the checkpoints (logged,
   * uncached, in memory: written in the transaction of the write-back).
   */
  public static void addTo(Topology topology, String processor, String inboxSource, Topic<String, InboxEntry> inbox,
      ConversationMaterialiser.Stores stores, ConversationsConfig cfg, ConversationOrders orders) {
    InboxReplay replay = new InboxReplay(inbox.keySerde().deserializer(), inbox.valueSerde().deserializer());
    topology.addProcessor(processor, () -> new ConversationMaterialiser(stores, cfg, orders, replay), inboxSource);
    topology.addStateStore(writeBack(stores.states(), STATE_CODEC), processor);
    if (stores.totals() != null) {
      topology.addStateStore(writeBack(stores.totals(), TOTALS_CODEC), processor);
    }
    // One key per input partition: in memory (restored from its changelog), not one more RocksDB per task.
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(stores.checkpoints()),
        Serdes.String(), Serdes.Long()).withCachingDisabled(), processor);
  }
}
