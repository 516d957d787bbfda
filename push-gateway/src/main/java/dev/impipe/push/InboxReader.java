package dev.impipe.push;

import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.InboxEntry;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.streams.StoredValues;
import dev.impipe.runtime.topics.ImTopics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's reader: every partition of {@code im.inbox} and {@code im.ack-timeouts} ({@code read_committed}, no
 * consumer group, from the end), each record handed to the connections it is for (see {@link Gateway}). Values are
 * decoded only when a connection wants them; one that cannot be decoded is quarantined to the rejected topic (raw,
 * with the reason) and its connections read on through the store, and the reader goes on. A reader that stops with
 * an error says so ({@link #alive()}), which makes {@code /health} answer 503.
 *
 * <p>In {@code owned} mode ({@link PushConfig.ReadMode#OWNED}) it reads only the partitions it is told to
 * ({@link #want}): the inbox partitions of this instance's inbox-store tasks plus those of the large-group timelines
 * listened to here, and the timeout partitions of the former. The reader thread applies a new wish between two
 * polls: a partition kept keeps its position, a gained one is read from its end, and the connections that read from
 * it here (a listened timeline, normally) are told to read what came before through the store ({@code gained}).
 */
final class InboxReader implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(InboxReader.class);

  private final ImTopics topics;
  private final Function<String, List<Connection>> users;
  private final Function<String, List<Connection>> groups;
  private final PushOutput output;
  private final Counter quarantined;
  private final Counter bytesRead;
  private final Counter recordsRead;
  private final PushTimings timings;
  private final boolean owned;
  /** Per gained inbox partition, the offset of its last record before the reader's start there (-1: none). */
  private final Consumer<Map<Integer, Long>> gained;
  private final KafkaConsumer<String, byte[]> consumer;
  private final Deserializer<InboxEntry> entries;
  private final Deserializer<AckTimeout> timeouts;
  private final Thread thread;
  private volatile AtomicLongArray seen = new AtomicLongArray(0);
  private volatile boolean running = true;
  private volatile boolean alive = true;
  /** The inbox partitions the reader reads now, with {@code all} ({@code owned}: {@link #assignment}'s). */
  private volatile Set<Integer> all = Set.of();
  /** {@code owned} mode: what the reader reads (null: every partition). */
  private volatile OwnedAssignment assignment;

  /**
   * @param users the connections of a user id (null: none)
   * @param groups the connections listening to a large group's timeline (null: none)
   * @param owned whether to read only what {@link #want} names (else every partition)
   * @param gained called on the reader thread with each newly read inbox partition and the offset of its last
   *     record before the reader's start there
   */
  InboxReader(ImTopics topics, Map<String, Object> clientProperties, Function<String, List<Connection>> users,
      Function<String, List<Connection>> groups, PushOutput output, MeterRegistry metrics, PushTimings timings,
      boolean owned, Consumer<Map<Integer, Long>> gained) {
    this.topics = topics;
    this.users = users;
    this.groups = groups;
    this.output = output;
    this.quarantined = Counter.builder("im.push.quarantined")
        .description("records the reader could not decode, written to the rejected topic").register(metrics);
    this.bytesRead = Counter.builder("im.push.reader.bytes").baseUnit("bytes")
        .description("bytes of inbox records (key + value) the gateway's reader read").register(metrics);
    this.recordsRead = Counter.builder("im.push.reader.records")
        .description("inbox records the gateway's reader read").register(metrics);
    Gauge.builder("im.push.reader.partitions", this, r -> r.reading().size())
        .description("inbox partitions the gateway's reader reads").register(metrics);
    this.timings = timings;
    this.owned = owned;
    this.gained = gained;
    Map<String, Object> props = new HashMap<>();
    clientProperties.forEach((k, v) -> {
      if (ConsumerConfig.configNames().contains(k) || k.startsWith("sasl.") || k.startsWith("ssl.")) {
        props.put(k, v);
      }
    });
    props.remove(ConsumerConfig.GROUP_ID_CONFIG);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
    this.consumer = new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer());
    this.entries = topics.inbox().valueSerde().deserializer();
    this.timeouts = topics.ackTimeouts().valueSerde().deserializer();
    this.thread = new Thread(this::read, "push-gateway-reader");
    this.thread.setDaemon(true);
  }

  /**
   * Assigns every partition of the inbox and the timeouts at their end (in {@code owned} mode none until
   * {@link #want}), then starts reading.
   */
  void start() {
    List<TopicPartition> assigned = new ArrayList<>();
    int inboxPartitions = partitions(topics.inbox().name(), assigned);
    partitions(topics.ackTimeouts().name(), assigned);
    AtomicLongArray positions = new AtomicLongArray(inboxPartitions);
    for (int p = 0; p < inboxPartitions; p++) {
      positions.set(p, -1);
    }
    if (!owned) {
      consumer.assign(assigned);
      consumer.seekToEnd(assigned);
      Set<Integer> all = new TreeSet<>();
      for (int p = 0; p < inboxPartitions; p++) {
        consumer.position(new TopicPartition(topics.inbox().name(), p));
        all.add(p);
      }
      this.all = Set.copyOf(all);
    } else {
      assignment = new OwnedAssignment(consumer, topics.inbox().name(), topics.ackTimeouts().name(), positions,
          gained);
    }
    seen = positions;
    thread.start();
  }

  /** Partitions of {@code im.inbox} (known once started). */
  int partitions() {
    return seen.length();
  }

  /** Asks the reader ({@code owned} mode, once started) to read these partitions from its next poll on. */
  void want(OwnedAssignment.Wish next) {
    OwnedAssignment a = assignment;
    if (a != null) {
      a.want(next);
    }
  }

  /** The inbox partitions the reader reads now: a device of a user in one of them can be served here. */
  Set<Integer> reading() {
    OwnedAssignment a = assignment;
    return a == null ? all : a.reading();
  }

  private int partitions(String topic, List<TopicPartition> into) {
    List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
    for (PartitionInfo info : infos) {
      into.add(new TopicPartition(topic, info.partition()));
    }
    return infos.size();
  }

  /** The offset of the last record of {@code key}'s inbox partition this reader has passed (-1: none yet). */
  long seen(String key) {
    AtomicLongArray s = seen;
    return s.get(Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % s.length());
  }

  private void read() {
    try {
      while (running) {
        if (owned) {
          assignment.reassign();
          if (assignment.idle()) {
            // Nothing to read yet (no task here): a consumer without partitions cannot poll.
            synchronized (this) {
              wait(100);
            }
            continue;
          }
        }
        ConsumerRecords<String, byte[]> records = consumer.poll(Duration.ofMillis(100));
        long polledMs = System.currentTimeMillis();
        long polledNanos = System.nanoTime();
        String inbox = topics.inbox().name();
        for (ConsumerRecord<String, byte[]> r : records) {
          boolean isInbox = r.topic().equals(inbox);
          if (isInbox) {
            recordsRead.increment();
            bytesRead.increment(Math.max(0, r.serializedKeySize()) + Math.max(0, r.serializedValueSize()));
          }
          if (r.key() != null && r.value() != null && (!isInbox || !owned
              || assignment.route(r.partition(), r.offset()))) {
            route(r);
            if (isInbox) {
              timings.polled(r.timestamp(), polledMs);
              timings.handedOff(polledNanos);
            }
          }
        }
        if (owned) {
          assignment.afterPoll();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (WakeupException e) {
      if (running) {
        LOG.error("Push gateway reader woken up unexpectedly", e);
      }
    } catch (RuntimeException | Error e) {
      LOG.error("Push gateway reader stopped: live pushes stopped, /health says so", e);
    } finally {
      alive = !running;
      consumer.close();
    }
  }

  /** One record of the inbox or the timeouts to the connections it is for; one it cannot decode is quarantined. */
  private void route(ConsumerRecord<String, byte[]> r) {
    if (!r.topic().equals(topics.inbox().name())) {
      List<Connection> conns = users.apply(r.key());
      if (conns != null) {
        AckTimeout timeout = decode(r, timeouts, null);
        if (timeout == null) {
          return; // a lost timeout: the wheel's next one (or the device's own ACK) settles the entries
        }
        Header h = r.headers().lastHeader(Gateway.FINAL_HEADER);
        boolean last = h == null || !"false".equals(new String(h.value(), StandardCharsets.UTF_8));
        for (Connection c : conns) {
          if (c.device.equals(timeout.getDeviceId())) {
            deliver(c, () -> c.ackTimeout(timeout, last));
          }
        }
      }
      return;
    }
    // Published before the lookup: a connection registering concurrently either is found here, or reads its
    // backlog with minSeq >= this offset (so the store holds this record when it reads).
    seen.set(r.partition(), r.offset());
    // A large group's timeline goes to the connections of its readers (each decides what is theirs).
    String group = Ids.isGroupTimeline(r.key()) ? r.key().substring(1) : null;
    List<Connection> conns = group != null ? groups.apply(group) : users.apply(r.key());
    if (conns == null) {
      return;
    }
    InboxEntry entry = decode(r, entries, conns);
    if (entry == null) {
      return;
    }
    for (Connection c : conns) {
      deliver(c, group != null ? () -> c.offerGroup(group, r.offset(), entry) : () -> c.offer(r.offset(), entry));
    }
  }

  /**
   * The value of {@code r}, or null when it cannot be decoded (a corrupt record, the registry away): the raw record
   * goes to the rejected topic with the reason and the connections it was for read on through the store.
   */
  private <T> T decode(ConsumerRecord<String, byte[]> r, Deserializer<T> deserializer, List<Connection> gapped) {
    try {
      return deserializer.deserialize(r.topic(), r.headers(), r.value());
    } catch (RuntimeException e) {
      quarantined.increment();
      LOG.warn("{}-{}@{} not decodable, quarantined: {}", r.topic(), r.partition(), r.offset(), e.toString());
      output.rejected(r, StoredValues.UNDECODABLE, "push gateway could not decode the value: " + e);
      if (gapped != null) {
        String group = Ids.isGroupTimeline(r.key()) ? r.key().substring(1) : null;
        for (Connection c : gapped) {
          deliver(c, () -> c.gap(group, r.offset() - 1));
        }
      }
      return null;
    }
  }

  /** False once the reader stopped with an error: live pushes have stopped, the instance is not ready. */
  boolean alive() {
    return alive;
  }

  /**
   * Hands a record to one connection: whatever goes wrong there (a socket closed under it) closes that connection,
   * never the reader every other connection depends on.
   */
  private static void deliver(Connection c, Runnable offer) {
    try {
      offer.run();
    } catch (RuntimeException e) {
      LOG.warn("{} closed: {}", c, e.toString());
      try {
        c.close((short) 1011, "server error, reconnect");
      } catch (RuntimeException closing) {
        LOG.debug("{}: {}", c, closing.toString());
      }
    }
  }

  @Override
  public void close() {
    running = false;
    consumer.wakeup();
    try {
      thread.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
