package dev.impipe.bench.jmh;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.ack.wheel.AckWheelMetrics;
import dev.impipe.ack.wheel.AckWheelTopology;
import dev.impipe.avro.Ack;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.Delivery;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The hot paths through the real topologies and their RocksDB stores (TopologyTestDriver, so no broker): the ACK
 * wheel's insert, cumulative remove and expire, and the fan-out's membership prefix scan of a 1,000-member group.
 * Output records are drained as bytes each operation; the figures include the driver's own overhead.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class TopologyBench {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final int GROUP_SIZE = 1_000;
  private static final int DEVICES = 1_000;

  private TopologyTestDriver wheel;
  private TestInputTopic<String, Delivery> deliveries;
  private TestInputTopic<String, Ack> acks;
  private TestOutputTopic<byte[], byte[]> timeouts;
  private TopologyTestDriver fanout;
  private TestInputTopic<String, ChatMessage> messages;
  private TestOutputTopic<byte[], byte[]> inbox;
  private long seq;
  private long now;
  private int message;

  @Setup(Level.Trial)
  public void setup() {
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope("mock://jmh-topo"));
    AckTimeoutConfig config = AckTimeoutConfig.fromEnv(Map.of("IM_ACK_TICK", "1s", "IM_ACK_TIMEOUT", "15s"));
    wheel = new TopologyTestDriver(AckWheelTopology.build(topics, config,
        new AckWheelMetrics(new SimpleMeterRegistry())), StreamsTestConfig.forDriver("jmh-wheel"), T0);
    deliveries = wheel.createInputTopic(topics.deliveries().name(), topics.deliveries().keySerde().serializer(),
        topics.deliveries().valueSerde().serializer());
    acks = wheel.createInputTopic(topics.acks().name(), topics.acks().keySerde().serializer(),
        topics.acks().valueSerde().serializer());
    timeouts = wheel.createOutputTopic(topics.ackTimeouts().name(), new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
    now = T0.toEpochMilli();

    fanout = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults().withLargeGroupThreshold(0),
        new FanoutMetrics(new SimpleMeterRegistry())), StreamsTestConfig.forDriver("jmh-fanout"), T0);
    TestInputTopic<String, MembershipChange> members = fanout.createInputTopic(topics.groupMembers().name(),
        topics.groupMembers().keySerde().serializer(), topics.groupMembers().valueSerde().serializer());
    for (int i = 0; i < GROUP_SIZE; i++) {
      members.pipeInput("g", new MembershipChange("g", "u" + i, MembershipOp.JOIN, T0, null, null));
    }
    messages = fanout.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer());
    inbox = fanout.createOutputTopic(topics.inbox().name(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
    inbox.readRecordsToList();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    wheel.close();
    fanout.close();
  }

  /** One push recorded: a key in the pending index and one in the wheel. */
  @Benchmark
  public void wheelInsert() {
    deliver("u" + (seq % DEVICES), ++seq);
  }

  /** A push and its cumulative ACK: inserted, then removed from both indexes by a device-prefix scan. */
  @Benchmark
  public void wheelInsertThenAck() {
    String user = "u" + (seq % DEVICES);
    long s = ++seq;
    deliver(user, s);
    acks.pipeInput(new TestRecord<>(user, new Ack(user, "phone", s, Instant.ofEpochMilli(now)),
        Instant.ofEpochMilli(now)));
  }

  /** 100 pushes that all expire in one punctuation (range scan of the wheel, 100 AckTimeouts batched per device). */
  @Benchmark
  @OperationsPerInvocation(100)
  public List<TestRecord<byte[], byte[]>> wheelInsertAndExpire100() {
    for (int i = 0; i < 100; i++) {
      deliver("u" + i, ++seq);
    }
    now += Duration.ofSeconds(17).toMillis();
    wheel.advanceWallClockTime(Duration.ofSeconds(17));
    return timeouts.readRecordsToList();
  }

  /** One message to a 1,000-member group: a prefix scan of the membership store and 1,000 inbox entries. */
  @Benchmark
  public List<TestRecord<byte[], byte[]>> fanoutGroupOf1000() {
    int n = ++message;
    messages.pipeInput("g", ChatMessage.newBuilder().setMessageId("m" + n).setClientMsgId("c" + n)
        .setConversationId("g").setConversationType(ConversationType.GROUP).setGroupId("g")
        .setType(MessageType.MESSAGE).setSenderId("u0").setBody("hello").setSentAt(T0).setAttributes(Map.of())
        .build());
    return inbox.readRecordsToList();
  }

  private void deliver(String user, long s) {
    Delivery d = new Delivery(user, "phone", s, null, Instant.ofEpochMilli(now), 1, null);
    deliveries.pipeInput(new TestRecord<>(user, d, Instant.ofEpochMilli(now)));
  }
}
