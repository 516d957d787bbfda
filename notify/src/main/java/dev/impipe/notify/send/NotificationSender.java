package dev.impipe.notify.send;

import dev.impipe.avro.Notification;
import dev.impipe.avro.PushRegistration;
import dev.impipe.notify.NotifyConfig;
import dev.impipe.notify.provider.NotificationPayload;
import dev.impipe.notify.provider.Provider;
import dev.impipe.notify.provider.Providers;
import dev.impipe.notify.provider.SendOutcome;
import dev.impipe.runtime.security.ComponentAcls;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads {@code im.notifications} (read_committed, manual commits) and sends each notification through its provider,
 * at least once: a partition's offset is committed only up to its lowest unfinished record ({@link PartitionOffsets}).
 * At most {@code IM_NOTIFY_MAX_IN_FLIGHT} sends are outstanding; beyond that the partitions are paused. What an answer
 * leads to is {@link OutcomePolicy}'s decision; a retry waits in a {@link RetryQueue}, so it delays nobody else. All
 * state is owned by the loop thread; providers' answers and the producer's acknowledgements reach it through a queue.
 */
public final class NotificationSender implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NotificationSender.class);
  private static final Duration POLL = Duration.ofMillis(20);
  private static final Duration COMMIT_EVERY = Duration.ofMillis(200);
  private static final String SOURCE = "notify";
  /**
   * Notifications waiting for a retry, per allowed send in flight, beyond which reading pauses: a provider that is
   * down for long holds a bounded number of records in memory (the rest wait in the topic).
   */
  static final int WAITING_PER_IN_FLIGHT = 16;

  /** One record of the notifications topic being worked on. */
  private static final class Item {
    final ConsumerRecord<byte[], byte[]> record;
    final PartitionOffsets owner;
    Notification notification;
    int attempts;

    Item(ConsumerRecord<byte[], byte[]> record, PartitionOffsets owner) {
      this.record = record;
      this.owner = owner;
    }
  }

  private final Providers providers;
  private final OutcomePolicy policy;
  private final int maxInFlight;
  private final SenderMetrics metrics;
  private final Clock clock;
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final KafkaProducer<byte[], byte[]> producer;
  private final Serializer<PushRegistration> registrations;
  /** One instance for the sender's life: it caches the writer schemas it fetched from the registry. */
  private final Deserializer<Notification> notifications;
  private final String notificationsTopic;
  private final String registrationsTopic;
  private final String rejectedTopic;
  private final Thread thread;
  private final ConcurrentLinkedQueue<Runnable> events = new ConcurrentLinkedQueue<>();
  private final Map<TopicPartition, PartitionOffsets> offsets = new HashMap<>();
  private final Map<TopicPartition, Long> committed = new HashMap<>();
  private final ArrayDeque<Item> backlog = new ArrayDeque<>();
  private final RetryQueue<Item> retries = new RetryQueue<>();
  private int inFlight;
  private Instant lastCommit = Instant.EPOCH;
  private volatile boolean running;

  /** @param clientProperties Kafka client settings (at least {@code bootstrap.servers}); consumer and producer mixed */
  public NotificationSender(Map<String, Object> clientProperties, ImTopics topics, NotifyConfig config,
      Providers providers, MeterRegistry meters, Clock clock) {
    this.providers = providers;
    this.policy = new OutcomePolicy(config.maxAttempts(), config.retryBackoff(), config.maxRetryAfter());
    this.maxInFlight = config.maxInFlight();
    this.metrics = new SenderMetrics(meters);
    this.clock = clock;
    this.consumer = SenderClients.consumer(clientProperties, groupId(topics.names()), maxInFlight);
    this.producer = SenderClients.producer(clientProperties);
    this.registrations = topics.pushRegistrations().valueSerde().serializer();
    this.notifications = topics.notifications().valueSerde().deserializer();
    this.notificationsTopic = topics.notifications().name();
    this.registrationsTopic = topics.pushRegistrations().name();
    this.rejectedTopic = topics.rejected().name();
    this.thread = new Thread(this::run, "notify-sender");
  }

  /** The senders' consumer group: {@code <prefix>notify-senders}. */
  public static String groupId(TopicNames names) {
    String prefix = names.messages().substring(0, names.messages().length() - "messages".length());
    return ComponentAcls.of(names, "notify").orElseThrow().consumerGroup(prefix, ComponentAcls.NOTIFY_SENDERS_GROUP);
  }

  /** Starts reading on a thread of its own. */
  public NotificationSender start() {
    running = true;
    thread.start();
    return this;
  }

  /** Whether the loop runs (readiness). */
  public boolean running() {
    return running && thread.isAlive();
  }

  private void run() {
    try {
      consumer.subscribe(List.of(notificationsTopic), new Rebalance());
      long backoffMs = 0;
      while (running) {
        try {
          loopOnce();
          backoffMs = 0;
        } catch (WakeupException e) {
          // close() woke the poll
        } catch (RuntimeException e) {
          // A broker away or a failed commit: go on after a growing pause (up to 5 s) rather than spin.
          backoffMs = Math.min(Math.max(100, backoffMs * 2), 5_000);
          LOG.warn("Notification sender loop failed; going on in {} ms", backoffMs, e);
          if (!SenderClients.sleep(backoffMs) || !running) {
            break;
          }
        }
      }
      commit(true);
    } catch (RuntimeException e) {
      LOG.error("Notification sender stopped", e);
    } finally {
      running = false;
      consumer.close();
    }
  }

  private void loopOnce() {
    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(POLL)) {
      PartitionOffsets owner = offsets.computeIfAbsent(new TopicPartition(record.topic(), record.partition()),
          tp -> new PartitionOffsets());
      owner.started(record.offset());
      backlog.add(new Item(record, owner));
    }
    Runnable event;
    while ((event = events.poll()) != null) {
      event.run();
    }
    for (Item item : retries.takeDue(clock.instant(), Math.max(0, maxInFlight - inFlight))) {
      if (current(item)) {
        send(item);
      }
    }
    while (inFlight < maxInFlight && !backlog.isEmpty()) {
      start(backlog.poll());
    }
    Set<TopicPartition> assigned = consumer.assignment();
    if (backlog.isEmpty() && inFlight < maxInFlight
        && retries.size() < (long) maxInFlight * WAITING_PER_IN_FLIGHT) {
      consumer.resume(assigned);
    } else {
      consumer.pause(assigned);
    }
    metrics.inFlight(inFlight);
    commit(false);
  }

  private boolean current(Item item) {
    return offsets.get(new TopicPartition(item.record.topic(), item.record.partition())) == item.owner;
  }

  private void start(Item item) {
    try {
      item.notification = notifications.deserialize(item.record.topic(), item.record.value());
    } catch (RuntimeException e) {
      reject(item, RejectedRecord.INVALID, "not a Notification: " + e.getMessage());
      return;
    }
    if (item.notification == null) {
      finish(item);
      return;
    }
    if (providers.get(item.notification.getProvider()).isEmpty()) {
      reject(item, OutcomePolicy.PROVIDER_OFF, "provider " + item.notification.getProvider() + " is not enabled");
      return;
    }
    send(item);
  }

  private void send(Item item) {
    Provider provider = providers.get(item.notification.getProvider()).orElseThrow();
    item.attempts++;
    inFlight++;
    provider.send(item.notification, NotificationPayload.bytes(item.notification))
        .whenComplete((outcome, error) -> events.add(() -> answered(item, provider.name(), outcome != null
            ? outcome : new SendOutcome.Retry(0, "provider error: " + error, java.util.Optional.empty()))));
  }

  private void answered(Item item, String provider, SendOutcome outcome) {
    inFlight--;
    Instant now = clock.instant();
    metrics.answered(provider, outcome, Duration.between(item.notification.getEntryAt(), now));
    if (!current(item)) {
      return; // the partition was revoked: its new owner sends it again
    }
    Step step = policy.decide(outcome, item.attempts);
    if (step instanceof Step.RemoveRegistration r) {
      removeRegistration(item, r.reason(), now);
    } else if (step instanceof Step.RetryIn r) {
      metrics.retried();
      retries.add(item, now.plus(r.delay()));
    } else if (step instanceof Step.Reject r) {
      reject(item, r.code(), r.reason());
    } else {
      finish(item);
    }
  }

  private void removeRegistration(Item item, String reason, Instant now) {
    PushRegistration removal = SenderClients.removal(item.notification, reason, now);
    produce(item, new ProducerRecord<>(registrationsTopic, item.record.key(),
        registrations.serialize(registrationsTopic, removal)));
  }

  private void reject(Item item, String code, String reason) {
    LOG.info("Notification {}@{} rejected: {} {}", item.record.partition(), item.record.offset(), code, reason);
    ProducerRecord<byte[], byte[]> dead = new ProducerRecord<>(rejectedTopic, item.record.key(),
        item.record.value());
    RejectedHeaders.add(dead.headers(), new RejectedRecord(code, reason, SOURCE));
    RejectedHeaders.addOrigin(dead.headers(), item.record.topic(), item.record.partition(), item.record.offset());
    produce(item, dead);
  }

  /** The record finishes when the broker has it; if it cannot be written, the notification is tried again later. */
  private void produce(Item item, ProducerRecord<byte[], byte[]> record) {
    producer.send(record, (md, e) -> events.add(() -> {
      if (e == null) {
        finish(item);
      } else if (current(item)) {
        LOG.warn("Could not write to {}; notification {}@{} is sent again", record.topic(), item.record.partition(),
            item.record.offset(), e);
        retries.add(item, clock.instant().plus(policy.retryDelay(java.util.Optional.empty(), 1)));
      }
    }));
  }

  private void finish(Item item) {
    item.owner.finished(item.record.offset());
  }

  private void commit(boolean sync) {
    Instant now = clock.instant();
    if (!sync && now.isBefore(lastCommit.plus(COMMIT_EVERY))) {
      return;
    }
    lastCommit = now;
    Map<TopicPartition, OffsetAndMetadata> due = PartitionOffsets.due(offsets, offsets.keySet(), committed);
    if (due.isEmpty()) {
      return;
    }
    if (sync) {
      consumer.commitSync(due);
      due.forEach((tp, o) -> committed.put(tp, o.offset()));
    } else {
      consumer.commitAsync(due, (done, e) -> {
        if (e == null) {
          done.forEach((tp, o) -> committed.put(tp, o.offset()));
        } else {
          LOG.debug("Offset commit failed; the next one covers it", e);
        }
      });
    }
  }

  /** Commits what is finished of partitions leaving this instance and forgets their work. */
  private final class Rebalance implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      try {
        Map<TopicPartition, OffsetAndMetadata> due = PartitionOffsets.due(offsets, partitions, Map.of());
        if (!due.isEmpty()) {
          consumer.commitSync(due);
        }
      } catch (RuntimeException e) {
        LOG.warn("Could not commit revoked partitions {}; their new owner repeats some sends", partitions, e);
      }
      forget(partitions);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      forget(partitions);
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      // PartitionOffsets are created by the first record read from a partition.
    }

    private void forget(Collection<TopicPartition> partitions) {
      partitions.forEach(tp -> {
        offsets.remove(tp);
        committed.remove(tp);
      });
      backlog.removeIf(item -> partitions.contains(new TopicPartition(item.record.topic(), item.record.partition())));
    }
  }

  /** Stops reading, commits what is finished, waits for pending writes. Sends still outstanding are repeated later. */
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
    producer.close(Duration.ofSeconds(10));
  }

}
