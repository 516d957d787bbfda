package dev.impipe.push;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code owned} mode ({@link PushConfig.ReadMode#OWNED}): follows where the inbox store's active tasks run, tells the
 * gateway's reader to read those partitions (and those of the timelines listened to here), moves the connections of
 * users whose partition left this instance, and says what to do with a new device ({@link #verdict}).
 *
 * <p>It looks at the Streams metadata every {@link #INTERVAL_MS} ms while the app is RUNNING (the app's one state
 * listener is the health check's; a look is a map walk). While it is REBALANCING the last placement holds: a
 * cooperative rebalance keeps the tasks that do not move, and a device is not sent away on a half-known placement.
 */
final class OwnedReading implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(OwnedReading.class);
  static final long INTERVAL_MS = 200;

  private final KafkaStreams streams;
  private final String inboxTopic;
  private final HostInfo self;
  private final Gateway gateway;
  private volatile Placement current = Placement.UNKNOWN;
  private volatile boolean running = true;

  /**
   * @param streams the inbox store's Streams app of this process
   * @param self this instance's {@code application.server}
   */
  OwnedReading(KafkaStreams streams, String inboxTopic, HostInfo self, Gateway gateway) {
    this.streams = streams;
    this.inboxTopic = inboxTopic;
    this.self = self;
    this.gateway = gateway;
  }

  OwnedReading start() {
    gateway.later(0, this::tick);
    return this;
  }

  @Override
  public void close() {
    running = false;
  }

  /**
   * What to do with a device of {@code user} connecting here now. While the store rebalances, the owners this
   * instance last saw may be gone or changing: a device it would send elsewhere retries instead, so that two instances
   * with different views do not send it back and forth.
   */
  Placement.Verdict verdict(String user) {
    Placement.Verdict verdict = current.verdict(user);
    return verdict == Placement.Verdict.REDIRECT && streams.state() != KafkaStreams.State.RUNNING
        ? Placement.Verdict.RETRY : verdict;
  }

  /** Where a device of {@code user} is sent, or null when no other instance owns the user's partition. */
  String redirectUrl(String user, String device) {
    return current.owner(user).map(o -> Frames.redirectUrl(o, PushGatewayComponent.PATH, device)).orElse(null);
  }

  private void tick() {
    if (!running) {
      return;
    }
    try {
      check();
    } catch (RuntimeException e) {
      LOG.warn("Following the inbox store's placement: {}", e.toString());
    } finally {
      if (running) {
        gateway.later(INTERVAL_MS, this::tick);
      }
    }
  }

  /** One look: the reader's partitions, then the connections that must move. */
  void check() {
    Placement next = look();
    if (next == null) {
      return;
    }
    if (!next.equals(current)) {
      LOG.info("Inbox partitions of this instance: {}; of others: {}", new TreeSet<>(next.local()), next.remote());
    }
    current = next;
    gateway.reader().want(new OwnedAssignment.Wish(next.inboxPartitions(gateway.listenedTimelines()), next.local()));
    next.notServed(List.copyOf(gateway.users())).forEach((user, owner) -> {
      for (Connection c : gateway.connections(user)) {
        c.redirect(Frames.redirectUrl(owner, PushGatewayComponent.PATH, c.device),
            "this user's inbox partition moved to another instance");
      }
    });
  }

  /** The placement Streams reports now, or null while the app is not RUNNING or cannot say. */
  private Placement look() {
    if (streams.state() != KafkaStreams.State.RUNNING || gateway.reader().partitions() == 0) {
      return null;
    }
    try {
      Set<Integer> local = new TreeSet<>();
      Map<Integer, String> remote = new HashMap<>();
      for (StreamsMetadata m : streams.metadataForAllStreamsClients()) {
        for (TopicPartition tp : m.topicPartitions()) {
          if (tp.topic().equals(inboxTopic)) {
            if (m.hostInfo().equals(self)) {
              local.add(tp.partition());
            } else {
              remote.put(tp.partition(), m.host() + ":" + m.port());
            }
          }
        }
      }
      return new Placement(gateway.reader().partitions(), local, remote);
    } catch (RuntimeException e) {
      LOG.debug("Streams metadata not available: {}", e.toString());
      return null;
    }
  }
}
