package dev.impipe.ack.wheel;

import dev.impipe.runtime.streams.InputLag;
import dev.impipe.runtime.streams.StreamThreadConsumers;
import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.avro.Ack;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.Delivery;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.streams.StoreSuppliers;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.Topic;
import java.util.LinkedHashSet;
import java.util.Set;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * The ACK-timeout topology: {@code im.deliveries} and {@code im.acks} (co-partitioned by user id) into one wheel
 * processor with two changelogged RocksDB stores (the device store behind the Streams record cache if
 * {@code IM_ACK_STORE_CACHE}), out to {@code im.ack-timeouts}.
 */
public final class AckWheelTopology {

  public static final String DELIVERIES_SOURCE = "ack-deliveries-source";
  public static final String ACKS_SOURCE = "ack-acks-source";
  public static final String WHEEL_PROCESSOR = "ack-wheel";
  public static final String TIMEOUTS_SINK = "ack-timeouts-sink";
  /** Wheel entries that do not decode go here (the rejected topic) with their stored bytes. */
  public static final String REJECTED_SINK = "ack-rejected-sink";
  /**
   * {@code userId|deviceId -> [version] highest ACKed seq, ACK time, runs of pending seqs}: one record per device
   * (byte layouts in {@link WheelCodec}); a record with nothing pending whose device has not ACKed for
   * {@code IM_ACK_ACKED_RETENTION} is removed (a rolling scan, bounded like the wheel).
   */
  public static final String DEVICE_STORE = "ack-devices";
  /** {@code slot|userId|deviceId -> empty}: the devices with runs in each slot, scanned oldest slot first. */
  public static final String SLOT_STORE = "ack-slots";
  /**
   * The stores of the per-seq layout this one replaced ({@code ack-pending}, {@code ack-wheel}, {@code ack-acked}):
   * never opened, so their changelogs are never misread (docs/operations/upgrades-and-state-formats.md).
   */
  static final java.util.List<String> RETIRED_STORES = java.util.List.of("ack-pending", "ack-wheel", "ack-acked");
  /** Header of each AckTimeout: {@code true} for the final timeout, {@code false} for a redelivery request. */
  public static final String FINAL_HEADER = "im-ack-final";

  private AckWheelTopology() {}

  /** The topology for {@code topics} and {@code config}; meters go to {@code metrics}. */
  public static Topology build(ImTopics topics, AckTimeoutConfig config, AckWheelMetrics metrics) {
    // One budget for the wheels of all tasks: a stream thread's punctuations together expire at most
    // maxEntriesPerPunctuation entries per commit window (one transaction), whatever the number of tasks.
    return build(topics, config, metrics, new PunctuationBudget(config.maxEntriesPerPunctuation(),
        AckWheelProcessor.MAX_MS_PER_WINDOW, PunctuationBudget.DEFAULT_WINDOW_MS), StreamThreadConsumers.LAG);
  }

  /** With a given expiry budget (tests: two topologies standing for two tasks of one thread). */
  static Topology build(ImTopics topics, AckTimeoutConfig config, AckWheelMetrics metrics,
      PunctuationBudget budget) {
    return build(topics, config, metrics, budget, StreamThreadConsumers.LAG);
  }

  /**
   * With a given expiry budget and input lag source ({@link StreamThreadConsumers#LAG} in production, where the app
   * sets {@link StreamThreadConsumers} as its client supplier; it knows nothing on a TopologyTestDriver).
   */
  static Topology build(ImTopics topics, AckTimeoutConfig config, AckWheelMetrics metrics,
      PunctuationBudget budget, InputLag inputLag) {
    Topic<String, Delivery> deliveries = topics.deliveries();
    Topic<String, Ack> acks = topics.acks();
    Topic<String, AckTimeout> timeouts = topics.ackTimeouts();
    Topology topology = new Topology();
    topology.addSource(DELIVERIES_SOURCE, deliveries.keySerde().deserializer(),
        deliveries.valueSerde().deserializer(), deliveries.name());
    topology.addSource(ACKS_SOURCE, acks.keySerde().deserializer(), acks.valueSerde().deserializer(), acks.name());
    Set<StoreBuilder<?>> stores = new LinkedHashSet<>();
    for (String store : new String[] {DEVICE_STORE, SLOT_STORE}) {
      StoreBuilder<KeyValueStore<Bytes, byte[]>> builder = Stores.keyValueStoreBuilder(
          StoreSuppliers.budgetedKeyValue(store), Serdes.Bytes(), Serdes.ByteArray());
      // The cache serves the device reads (one per push, ACK and expired device) from the heap instead of RocksDB's
      // memtable skip lists, and folds a device's updates within one commit: under exactly-once the changelog only
      // has to be written by the commit, which flushes the cache first. The slot keys are written once and deleted
      // once, never read but by the scan: a cache would only add to their cost (ADR 0019).
      boolean cached = config.storeCache() && store.equals(DEVICE_STORE);
      stores.add(cached ? builder.withCachingEnabled() : builder.withCachingDisabled());
    }
    AckWheelProcessor.StoreNames names = new AckWheelProcessor.StoreNames(DEVICE_STORE, SLOT_STORE, TIMEOUTS_SINK,
        REJECTED_SINK, FINAL_HEADER);
    // The supplier attaches the stores: the processor knows them by the names it is given, not by our constants.
    topology.addProcessor(WHEEL_PROCESSOR, new ProcessorSupplier<String, SpecificRecord, Object, Object>() {
      @Override
      public Processor<String, SpecificRecord, Object, Object> get() {
        return new AckWheelProcessor(config, metrics, budget, deliveries.name(), acks.name(), inputLag, names);
      }

      @Override
      public Set<StoreBuilder<?>> stores() {
        return stores;
      }
    }, DELIVERIES_SOURCE, ACKS_SOURCE);
    topology.addSink(TIMEOUTS_SINK, timeouts.name(), timeouts.keySerde().serializer(),
        timeouts.valueSerde().serializer(), WHEEL_PROCESSOR);
    topology.addSink(REJECTED_SINK, topics.rejected().name(), topics.rejected().keySerde().serializer(),
        topics.rejected().valueSerde().serializer(), WHEEL_PROCESSOR);
    return topology;
  }

  /** The topology with meters that go nowhere. */
  public static Topology build(ImTopics topics, AckTimeoutConfig config) {
    return build(topics, config, AckWheelMetrics.discarding());
  }
}
