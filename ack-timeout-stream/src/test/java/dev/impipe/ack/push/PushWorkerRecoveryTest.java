package dev.impipe.ack.push;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The push worker keeps going after a failed commit, and hands large-group timeline entries to the channel. */
@Timeout(60)
class PushWorkerRecoveryTest {

  private static final TopicPartition P0 = new TopicPartition("im.inbox", 0);
  /**
   * How long a push may take to show up: the worker polls a MockConsumer, so only thread scheduling delays it. Short
   * on purpose: a mutant that stops the worker fails the test after this wait instead of running into PIT's
   * timeout (10 s and a new minion each).
   */
  private static final long PUSH_WAIT_S = 3;

  private String registryUrl;
  private final AtomicInteger commitFailures = new AtomicInteger();
  private MockConsumer<String, InboxEntry> consumer;
  private final BlockingQueue<String> pushed = new LinkedBlockingQueue<>();
  private PushWorker worker;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://push-recovery-" + UUID.randomUUID();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    consumer = new MockConsumer<>("earliest") {
      @Override
      public synchronized void commitSync() {
        if (commitFailures.getAndDecrement() > 0) {
          throw new CommitFailedException("the group rebalanced");
        }
        super.commitSync();
      }
    };
    consumer.schedulePollTask(() -> {
      consumer.rebalance(List.of(P0));
      consumer.updateBeginningOffsets(Map.of(P0, 0L));
    });
    DeviceChannel channel = new DeviceChannel() {
      @Override
      public Collection<String> connectedDevices(String userId) {
        return List.of("phone");
      }

      @Override
      public boolean push(String userId, String deviceId, long seq, InboxEntry entry) {
        pushed.add(userId + "#" + seq);
        return true;
      }

      @Override
      public void pushGroupTimeline(String groupId, long seq, InboxEntry entry) {
        pushed.add("group " + groupId + "#" + seq);
      }
    };
    worker = new PushWorker(consumer, new MockProducer<>(true, null, new StringSerializer(), (t, v) -> new byte[0]),
        topics, channel, Clock.systemUTC());
  }

  @AfterEach
  void tearDown() {
    worker.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void aFailedCommitDoesNotStopTheWorkerAndItsBatchIsPushedAgain() throws Exception {
    // Given the first commit fails (a rebalance)
    commitFailures.set(1);
    worker.start();
    consumer.schedulePollTask(() -> consumer.addRecord(record(0, "alice")));
    // (the next poll after the failure: the broker serves from wherever the worker's position is, so entry 0 again
    // only if the worker went back to its uncommitted batch, then entry 1)
    consumer.schedulePollTask(() -> {
      consumer.addRecord(record(0, "alice"));
      consumer.addRecord(record(1, "bob"));
    });
    assertThat(pushed.poll(PUSH_WAIT_S, TimeUnit.SECONDS)).isEqualTo("alice#0");

    // Then the uncommitted entry is pushed again (at least once), and later entries still go out
    assertThat(pushed.poll(PUSH_WAIT_S, TimeUnit.SECONDS)).isEqualTo("alice#0");
    assertThat(pushed.poll(PUSH_WAIT_S, TimeUnit.SECONDS)).isEqualTo("bob#1");
    assertThat(worker.failures()).isEqualTo(1);
  }

  @Test
  void aLargeGroupTimelineEntryIsHandedToTheChannel() throws Exception {
    worker.start();
    consumer.schedulePollTask(() -> consumer.addRecord(record(0, "#big")));
    assertThat(pushed.poll(PUSH_WAIT_S, TimeUnit.SECONDS)).isEqualTo("group big#0");
  }

  private static ConsumerRecord<String, InboxEntry> record(long offset, String key) {
    InboxEntry entry = InboxEntry.newBuilder().setUserId(key).setType(InboxEntryType.MESSAGE)
        .setConversationId("c").setConversationSeq(offset).setBody("b").setTimestamp(Instant.EPOCH).build();
    return new ConsumerRecord<>(P0.topic(), P0.partition(), offset, key, entry);
  }
}
