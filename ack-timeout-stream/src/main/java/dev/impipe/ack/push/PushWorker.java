package dev.impipe.ack.push;

import dev.impipe.avro.Ack;
import dev.impipe.avro.Delivery;
import dev.impipe.avro.InboxEntry;
import dev.impipe.runtime.Backoff;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.Topic;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The library a push worker embeds: reads {@code im.inbox} (read_committed), pushes each entry to the user's
 * connected devices through a {@link DeviceChannel}, records one {@link Delivery} per push in {@code im.deliveries},
 * and turns client ACKs into {@link Ack} records in {@code im.acks} — the two inputs of the ACK-timeout wheel.
 *
 * <p>At least once: inbox offsets are committed after the pushes' Delivery records are acknowledged by the broker.
 * After a crash some entries are pushed again; the client deduplicates by seq, and a repeated Delivery only restarts
 * that seq's timer. Which worker holds a user's connections is up to the deployment: either route a user's devices
 * to the worker that owns the user's inbox partition (one consumer group), or give every worker its own group id
 * and let each push only to the devices connected to it.
 *
 * <p>Failures do not stop it (see {@link #run}): only {@link #close()} does. Large groups: an entry of a group's own
 * timeline ({@code #groupId}, read diffusion) has no single user; the worker hands it to
 * {@link DeviceChannel#pushGroupTimeline} and records no Delivery for it. The channel (the push gateway, which knows
 * from each device's merged sync which large groups it reads) pushes it to the members' connected devices; a channel
 * that does nothing leaves large-group messages to the devices' merged sync.
 */
public final class PushWorker implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PushWorker.class);
  /** The pause after a failed batch: from 100 ms, doubling, up to 5 s; back to none after a good batch. */
  private static final Backoff BACKOFF = Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(5));

  private final Topic<String, InboxEntry> inbox;
  private final Topic<String, Delivery> deliveries;
  private final Topic<String, Ack> acks;
  private final DeviceChannel channel;
  private final Clock clock;
  private final Consumer<String, InboxEntry> consumer;
  private final Producer<String, Object> producer;
  private final Thread thread;
  private final AtomicLong pushed = new AtomicLong();
  private final AtomicLong acked = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  /** First offset of the batch being pushed, per partition: where to resume if it cannot be committed. */
  private final Map<TopicPartition, Long> uncommitted = new HashMap<>();
  private volatile boolean running = true;

  /**
   * @param clientProperties Kafka client settings (at least {@code bootstrap.servers}); consumer and producer
   *     settings may be mixed, each client ignores the other's
   * @param groupId consumer group of the inbox reader
   */
  public PushWorker(Map<String, Object> clientProperties, String groupId, ImTopics topics, DeviceChannel channel,
      Clock clock) {
    this.inbox = topics.inbox();
    this.deliveries = topics.deliveries();
    this.acks = topics.acks();
    this.channel = channel;
    this.clock = clock;
    Map<String, Object> consumerProps = new HashMap<>();
    consumerProps.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
    consumerProps.putAll(clientProperties);
    consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    consumerProps.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    consumerProps.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    this.consumer = new KafkaConsumer<>(only(consumerProps, ConsumerConfig.configNames()),
        inbox.keySerde().deserializer(), inbox.valueSerde().deserializer());
    Map<String, Object> producerProps = new HashMap<>(clientProperties);
    producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
    producerProps.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 5);
    this.producer = new KafkaProducer<>(only(producerProps, ProducerConfig.configNames()),
        new org.apache.kafka.common.serialization.StringSerializer(), new RoutingSerializer(deliveries, acks));
    this.thread = new Thread(this::run, "push-worker-" + groupId);
  }

  /** With given clients (tests). */
  PushWorker(Consumer<String, InboxEntry> consumer, Producer<String, Object> producer, ImTopics topics,
      DeviceChannel channel, Clock clock) {
    this.inbox = topics.inbox();
    this.deliveries = topics.deliveries();
    this.acks = topics.acks();
    this.channel = channel;
    this.clock = clock;
    this.consumer = consumer;
    this.producer = producer;
    this.thread = new Thread(this::run, "push-worker");
  }

  /** Starts reading the inbox on a thread of its own. */
  public PushWorker start() {
    thread.start();
    return this;
  }

  /** Records a client ACK: {@code deviceId} of {@code userId} has every seq {@code <= seq} (thread-safe). */
  public void acknowledge(String userId, String deviceId, long seq) {
    Ack ack = Ack.newBuilder().setUserId(userId).setDeviceId(deviceId).setSeq(seq).setAckedAt(clock.instant())
        .build();
    producer.send(new ProducerRecord<>(acks.name(), userId, ack), (md, e) -> {
      if (e != null) {
        LOG.warn("ACK {}/{}#{} not recorded", userId, deviceId, seq, e);
      }
    });
    acked.incrementAndGet();
  }

  /** Pushes made so far (one per entry and connected device). */
  public long pushes() {
    return pushed.get();
  }

  /** Client ACKs recorded so far. */
  public long acks() {
    return acked.get();
  }

  /** Failures the worker recovered from (a commit during a rebalance, a broker away...). */
  public long failures() {
    return failures.get();
  }

  /**
   * The loop survives every failure but a stop: a batch that could not be committed (a rebalance, a broker away) is
   * pushed again from its first offset (at least once), with a growing pause between failed attempts (up to 5 s); an
   * inbox record that cannot be decoded is logged and skipped.
   */
  private void run() {
    long backoffMs = 0;
    try {
      consumer.subscribe(List.of(inbox.name()));
      while (running) {
        try {
          pollPushCommit();
          backoffMs = 0;
        } catch (WakeupException e) {
          if (!running) {
            break;
          }
        } catch (RecordDeserializationException e) {
          failures.incrementAndGet();
          LOG.warn("Inbox record {}@{} cannot be decoded; skipped", e.topicPartition(), e.offset(), e);
          consumer.seek(e.topicPartition(), e.offset() + 1);
        } catch (RuntimeException e) {
          failures.incrementAndGet();
          LOG.warn("Push worker failed; resuming from the last committed batch", e);
          rewind();
          backoffMs = BACKOFF.nextMs(backoffMs);
          if (!pause(backoffMs)) {
            break;
          }
        }
      }
    } finally {
      consumer.close();
    }
  }

  private void pollPushCommit() {
    ConsumerRecords<String, InboxEntry> records = consumer.poll(Duration.ofMillis(200));
    if (records.isEmpty()) {
      return;
    }
    for (TopicPartition partition : records.partitions()) {
      uncommitted.putIfAbsent(partition, records.records(partition).get(0).offset());
    }
    for (ConsumerRecord<String, InboxEntry> record : records) {
      pushToDevices(record);
    }
    // The Delivery records must be on the broker before the inbox position moves past their entries.
    producer.flush();
    consumer.commitSync();
    uncommitted.clear();
  }

  /** Back to the first uncommitted offset of each partition still assigned (a revoked one resumes elsewhere). */
  private void rewind() {
    try {
      java.util.Set<TopicPartition> assigned = consumer.assignment();
      uncommitted.forEach((partition, offset) -> {
        if (assigned.contains(partition)) {
          consumer.seek(partition, offset);
        }
      });
      uncommitted.clear();
    } catch (RuntimeException e) {
      LOG.warn("Push worker could not rewind; the consumer resumes from its committed positions", e);
    }
  }

  private boolean pause(long millis) {
    try {
      Thread.sleep(millis);
      return running;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void pushToDevices(ConsumerRecord<String, InboxEntry> record) {
    InboxEntry entry = record.value();
    if (entry == null) {
      return;
    }
    String userId = record.key() != null ? record.key() : entry.getUserId();
    long seq = record.offset();
    if (Ids.isGroupTimeline(userId)) {
      // A large group's timeline (read diffusion): its members are not known here; the channel decides.
      channel.pushGroupTimeline(userId.substring(Ids.GROUP_TIMELINE_PREFIX.length()), seq, entry);
      return;
    }
    for (String deviceId : channel.connectedDevices(userId)) {
      java.time.Instant pushedAt = clock.instant();
      if (!channel.push(userId, deviceId, seq, entry)) {
        continue;
      }
      Delivery delivery = Delivery.newBuilder().setUserId(userId).setDeviceId(deviceId).setSeq(seq)
          .setMessageId(entry.getMessageId()).setPushedAt(pushedAt).setAttempt(1).build();
      producer.send(new ProducerRecord<>(deliveries.name(), userId, delivery));
      pushed.incrementAndGet();
    }
  }

  /** Stops reading, then flushes pending Delivery and Ack records. */
  @Override
  public void close() {
    running = false;
    consumer.wakeup();
    if (thread.isAlive()) {
      try {
        thread.join(Duration.ofSeconds(30).toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    producer.close(Duration.ofSeconds(30));
  }

  private static Map<String, Object> only(Map<String, Object> props, java.util.Set<String> known) {
    Map<String, Object> out = new HashMap<>();
    props.forEach((k, v) -> {
      if (known.contains(k) || k.startsWith("sasl.") || k.startsWith("ssl.")) {
        out.put(k, v);
      }
    });
    return out;
  }

  /** One producer for both topics: serializes each value with its own topic's serde. */
  private static final class RoutingSerializer implements org.apache.kafka.common.serialization.Serializer<Object> {
    private final Topic<String, Delivery> deliveries;
    private final Topic<String, Ack> acks;
    private final org.apache.kafka.common.serialization.Serializer<Delivery> deliverySerializer;
    private final org.apache.kafka.common.serialization.Serializer<Ack> ackSerializer;

    RoutingSerializer(Topic<String, Delivery> deliveries, Topic<String, Ack> acks) {
      this.deliveries = deliveries;
      this.acks = acks;
      this.deliverySerializer = deliveries.valueSerde().serializer();
      this.ackSerializer = acks.valueSerde().serializer();
    }

    @Override
    public byte[] serialize(String topic, Object data) {
      if (data instanceof Delivery d && topic.equals(deliveries.name())) {
        return deliverySerializer.serialize(topic, d);
      }
      if (data instanceof Ack a && topic.equals(acks.name())) {
        return ackSerializer.serialize(topic, a);
      }
      throw new IllegalArgumentException("Push worker does not write " + data + " to " + topic);
    }
  }
}
