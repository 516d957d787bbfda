package dev.impipe.fanout;

import dev.impipe.fanout.internal.FanoutNames;
import dev.impipe.fanout.internal.GenerationGate;
import dev.impipe.fanout.internal.InboxTopicChooser;
import dev.impipe.fanout.internal.MembershipProcessor;
import dev.impipe.fanout.internal.MessageFanoutProcessor;
import dev.impipe.runtime.domain.HistoryKey;
import dev.impipe.runtime.streams.StoreSuppliers;
import dev.impipe.runtime.streams.VersionedValue;
import dev.impipe.runtime.topics.GenerationControl;
import dev.impipe.runtime.topics.ImTopics;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * Fan-out (write diffusion): {@code im.messages} -> {@code im.inbox}, one entry per recipient keyed by user id. The
 * offset of each inbox entry becomes that user's sequence id. Membership changes are control records (JOIN / LEAVE)
 * in {@code im.messages}, so a group's log is the one order of its messages and membership; the applied ones are
 * also written to {@code im.group-members}, whose records written by others (operators, older producers) are still
 * applied.
 */
public final class FanoutTopology {

  public static final String APP_NAME = "fanout";

  public static final String MESSAGES_SOURCE = "fanout-messages-source";
  public static final String MEMBERS_SOURCE = "fanout-members-source";
  public static final String MEMBERSHIP_PROCESSOR = "fanout-membership";
  public static final String FANOUT_PROCESSOR = "fanout-messages";
  public static final String INBOX_SINK = "fanout-inbox-sink";
  /**
   * Between the processors and the inbox sink: the live inbox generation, the fence and the held entries of an
   * online switch ({@code GenerationGate}).
   */
  public static final String INBOX_GATE = "fanout-inbox-gate";
  /** Fence records of an online switch, to the control topic ({@code GenerationControl}). */
  public static final String CONTROL_SINK = "fanout-generation-control-sink";
  /** The gate's fenced generation and the entries it holds back during a switch, in order. */
  public static final String HELD_STORE = "fanout-generation-held";
  private static final Duration GATE_TICK = Duration.ofMillis(200);
  /** Accepted records of {@code im.messages} by conversation seq: what history serves (see {@code HistoryKey}). */
  public static final String HISTORY_SINK = "fanout-history-sink";
  /**
   * Applied JOIN / LEAVE control records of {@code im.messages}, as {@code MembershipChange}s: keeps
   * {@code im.group-members} a complete record of membership for its consumers (derived; see
   * {@code MembershipProcessor#DERIVED_HEADER}).
   */
  public static final String GROUP_MEMBERS_SINK = "fanout-group-members-sink";

  /**
   * {@code groupId, userId -> [version] joinedAt} ({@code MemberKeys}); a group is one prefix range.
   */
  public static final String MEMBERS_STORE = "fanout-members";
  /**
   * {@code senderId, conversationId, clientMsgId -> [version] messageId} ({@code SentCodec}), windowed by the dedupe
   * window.
   */
  public static final String DEDUPE_STORE = "fanout-dedupe";
  /**
   * {@code messageId -> [version] senderId, conversationId, clock, mode, seq, sentAt, clientMsgId} ({@code
   * SentCodec}), windowed by the recall window. {@code mode} is where the copies went: {@code W} the recipients'
   * inboxes, {@code T} a large group's timeline, 0 when not known.
   */
  public static final String SENT_STORE = "fanout-sent";
  /**
   * One logical clock per task, ticked by every membership change and message: orders joins against messages
   * exactly, where record timestamps can tie. Values {@code [version] int64}.
   */
  public static final String CLOCK_STORE = "fanout-clock";
  /**
   * Past memberships, {@code groupId, userId -> [version] joined clock, left clock} ({@code MemberKeys}), windowed
   * by the leave's record time and kept for the recall window: a recall reaches whoever got the message, also after
   * leaving (read as one key range of the group).
   */
  public static final String PAST_MEMBERS_STORE = "fanout-past-members";
  /** {@code groupId -> GroupState} (member count, read-diffusion mode, last conversation seq; versioned). */
  public static final String GROUPS_STORE = "fanout-groups";
  /**
   * {@code groupId -> ModeSwitch}: a switch to read diffusion whose CONVERSATION_MODE entries are still being written
   * in rounds (and how far they got); deleted when the last round is done, so it holds only work in progress.
   */
  public static final String MODE_SWITCHES_STORE = "fanout-mode-switches";

  /** The names the processors are given (they do not read this class). */
  static final FanoutNames NAMES = new FanoutNames(MEMBERS_STORE, GROUPS_STORE, MODE_SWITCHES_STORE, CLOCK_STORE,
      PAST_MEMBERS_STORE, DEDUPE_STORE, SENT_STORE, INBOX_GATE, HISTORY_SINK, GROUP_MEMBERS_SINK);

  private FanoutTopology() {}

  private static <V, O> ProcessorSupplier<String, V, String, O> supplier(
      Supplier<Processor<String, V, String, O>> processor, Set<StoreBuilder<?>> stores) {
    return new ProcessorSupplier<>() {
      @Override
      public Processor<String, V, String, O> get() {
        return processor.get();
      }

      @Override
      public Set<StoreBuilder<?>> stores() {
        return stores;
      }
    };
  }

  public static Topology build(ImTopics topics, FanoutConfig config, FanoutMetrics metrics) {
    return build(topics, config, metrics, Optional::empty);
  }

  /** The topology with the newest inbox switch record seen ({@link GenerationWatch}). */
  public static Topology build(ImTopics topics, FanoutConfig config, FanoutMetrics metrics,
      Supplier<Optional<GenerationControl.Switch>> control) {
    Topology topology = new Topology();
    topology.addSource(MESSAGES_SOURCE, topics.messages().keySerde().deserializer(),
        topics.messages().valueSerde().deserializer(), topics.messages().name());
    topology.addSource(MEMBERS_SOURCE, topics.groupMembers().keySerde().deserializer(),
        topics.groupMembers().valueSerde().deserializer(), topics.groupMembers().name());
    StoreBuilder<?> members = Stores.keyValueStoreBuilder(StoreSuppliers.keyValue(MEMBERS_STORE),
        Serdes.Bytes(), Serdes.ByteArray());
    StoreBuilder<?> groups = Stores.keyValueStoreBuilder(StoreSuppliers.keyValue(GROUPS_STORE),
        Serdes.String(), Serdes.ByteArray());
    StoreBuilder<?> switches = Stores.keyValueStoreBuilder(StoreSuppliers.keyValue(MODE_SWITCHES_STORE),
        Serdes.String(), Serdes.ByteArray());
    StoreBuilder<?> clock = Stores.keyValueStoreBuilder(StoreSuppliers.keyValue(CLOCK_STORE),
        Serdes.String(), VersionedValue.longSerde(CLOCK_STORE)).withCachingEnabled();
    StoreBuilder<?> pastMembers = Stores.windowStoreBuilder(StoreSuppliers.window(PAST_MEMBERS_STORE,
        config.recallWindow(), Duration.ofMillis(1), true), Serdes.Bytes(), Serdes.ByteArray());
    StoreBuilder<?> dedupe = Stores.windowStoreBuilder(StoreSuppliers.window(DEDUPE_STORE,
        config.dedupeWindow(), config.dedupeWindow(), false), Serdes.Bytes(), Serdes.ByteArray());
    StoreBuilder<?> sent = Stores.windowStoreBuilder(StoreSuppliers.window(SENT_STORE,
        config.recallWindow(), config.recallWindow(), false), Serdes.Bytes(), Serdes.ByteArray());
    // The suppliers attach the stores (both processors share the same builders of the membership stores).
    Set<StoreBuilder<?>> shared = Set.of(members, groups, switches, clock, pastMembers);
    Set<StoreBuilder<?>> fanoutStores = Set.of(members, groups, switches, clock, pastMembers, dedupe, sent);
    topology.addProcessor(MEMBERSHIP_PROCESSOR, supplier(() -> new MembershipProcessor(config, metrics, NAMES),
        shared), MEMBERS_SOURCE);
    topology.addProcessor(FANOUT_PROCESSOR, supplier(() -> new MessageFanoutProcessor(config, metrics, NAMES),
        fanoutStores), MESSAGES_SOURCE);
    StoreBuilder<?> held = Stores.keyValueStoreBuilder(StoreSuppliers.keyValue(HELD_STORE),
        Serdes.String(), Serdes.ByteArray());
    GenerationGate.Wiring wiring = new GenerationGate.Wiring(topics.names().generation(), topics.inbox().name(),
        control, HELD_STORE, INBOX_SINK, CONTROL_SINK, topics.inbox().valueSerde(), GATE_TICK);
    topology.addProcessor(INBOX_GATE, supplier(() -> new GenerationGate(wiring), Set.of(held)),
        MEMBERSHIP_PROCESSOR, FANOUT_PROCESSOR);
    topology.addSink(INBOX_SINK, new InboxTopicChooser(topics.names()), topics.inbox().keySerde().serializer(),
        topics.inbox().valueSerde().serializer(), INBOX_GATE);
    topology.addSink(CONTROL_SINK, GenerationControl.topic(topics.names()), new StringSerializer(),
        new StringSerializer(), INBOX_GATE);
    topology.addSink(HISTORY_SINK, topics.history().name(), topics.history().keySerde().serializer(),
        topics.history().valueSerde().serializer(),
        HistoryKey::partitions,
        FANOUT_PROCESSOR);
    topology.addSink(GROUP_MEMBERS_SINK, topics.groupMembers().name(), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer(), FANOUT_PROCESSOR);
    return topology;
  }
}
