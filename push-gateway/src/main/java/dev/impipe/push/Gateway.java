package dev.impipe.push;

import dev.impipe.edge.auth.Principal;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.edge.http.Json;
import dev.impipe.runtime.topics.ImTopics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ServerWebSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections of one gateway instance and the reader that feeds them.
 *
 * <p>Routing across instances: every instance reads all of {@code im.inbox} and {@code im.ack-timeouts}
 * ({@code read_committed}, no consumer group, from the end) and keeps only the records of users connected to it. A
 * device may therefore connect to any instance (no redirect, no rebalance that drops sockets), at the cost of each
 * instance reading the whole inbox stream: N instances read it N times. Values are decoded only for connected
 * users, so the per-instance cost is mostly network and key hashing. In {@code owned} mode ({@link OwnedReading})
 * each instance reads only the partitions of its own inbox-store tasks and devices of other users are sent to their
 * owner: N instances read the inbox about once.
 *
 * <p>Large groups ride on the same reader: their timelines {@code #groupId} are keys of {@code im.inbox}, so each
 * instance already reads them. A connection listens to the groups its user reads (learnt from the merged sync pages
 * and the user's membership entries, see {@link Connection}); a timeline record is decoded once per instance that
 * has a listener and written to each listening socket. With N instances a group message is read N times and
 * decoded at most N times, however many members are connected; no extra consumer, topic or state. In
 * {@code owned} mode the reader also reads the partitions of the timelines listened to here.
 */
final class Gateway implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);
  static final String FINAL_HEADER = "im-ack-final";

  private final ImTopics topics;
  private final PushConfig config;
  private final ApiClient api;
  private final PushOutput output;
  private final InboxReader reader;
  private final Map<String, List<Connection>> byUser = new ConcurrentHashMap<>();
  /** Per large group id: the connections listening to its timeline {@code #groupId}. */
  private final Map<String, List<Connection>> byGroup = new ConcurrentHashMap<>();
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger listened = new AtomicInteger();
  private final ScheduledExecutorService timer;
  /** Bytes held by every socket's write budget. */
  private final LongAdder budgeted = new LongAdder();
  private final Counter pushes;
  private final Counter acks;
  private final Counter resyncs;
  private final Counter offline;
  private final Counter retries;
  private final PushTimings timings;

  Gateway(ImTopics topics, Map<String, Object> clientProperties, PushConfig config, ApiClient api,
      MeterRegistry metrics) {
    this.topics = topics;
    this.config = config;
    this.api = api;
    this.output = new PushOutput(topics, clientProperties);
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "push-gateway-timer");
      t.setDaemon(true);
      return t;
    });
    this.timings = new PushTimings(metrics);
    this.reader = new InboxReader(topics, clientProperties, byUser::get, byGroup::get, output, metrics, timings,
        config.read() == PushConfig.ReadMode.OWNED, this::gained);
    Gauge.builder("im.push.connections", open, AtomicInteger::get).description("open device WebSockets")
        .register(metrics);
    Gauge.builder("im.push.group-feeds", listened, AtomicInteger::get)
        .description("large-group timelines listened to, summed over the open device WebSockets").register(metrics);
    this.pushes = Counter.builder("im.push.pushes").description("entries pushed to devices").register(metrics);
    this.acks = Counter.builder("im.push.acks").description("ACKs that moved a device cursor").register(metrics);
    this.resyncs = Counter.builder("im.push.resyncs").description("devices told to resync (fell behind)")
        .register(metrics);
    this.offline = Counter.builder("im.push.offline").description("devices closed by a final AckTimeout")
        .register(metrics);
    this.retries = Counter.builder("im.push.redeliveries").description("pushes repeated on a retry AckTimeout")
        .register(metrics);
    Gauge.builder("im.push.write-budget-bytes", budgeted, LongAdder::sum)
        .description("bytes of frames written to device sockets and not yet flushed, all sockets").register(metrics);
  }

  /** Starts the reader (from the end of the inbox and the timeouts) and the pings. */
  Gateway start() {
    reader.start();
    long ping = config.ping().toMillis();
    timer.scheduleAtFixedRate(this::pingAll, ping, ping, TimeUnit.MILLISECONDS);
    return this;
  }

  ApiClient api() {
    return api;
  }

  InboxReader reader() {
    return reader;
  }

  /** The users with a connection here. */
  java.util.Set<String> users() {
    return byUser.keySet();
  }

  /** The timelines {@code #groupId} that connections here listen to. */
  List<String> listenedTimelines() {
    return byGroup.keySet().stream().map(Ids::groupTimeline).toList();
  }

  /** The connections of {@code user} here (empty: none). */
  List<Connection> connections(String user) {
    return byUser.getOrDefault(user, List.of());
  }

  /** Partitions the reader started on (with their last offset before): connections here read that through the store. */
  private void gained(Map<Integer, Long> lastBefore) {
    int partitions = reader.partitions();
    byGroup.forEach((group, list) -> {
      Long offset = lastBefore.get(Placement.partition(Ids.groupTimeline(group), partitions));
      if (offset != null) {
        list.forEach(c -> c.gap(group, offset));
      }
    });
    byUser.forEach((user, list) -> {
      Long offset = lastBefore.get(Placement.partition(user, partitions));
      if (offset != null) {
        list.forEach(c -> c.gap(null, offset));
      }
    });
  }

  /** The timers of a live push's legs inside the gateway. */
  PushTimings timings() {
    return timings;
  }

  /**
   * Registers a new socket and starts sending its backlog (from {@code start}). A user at {@link PushConfig#maxSocketsPerUser()} sockets
   * on this instance loses the oldest (close {@link Connection#CLOSE_REPLACED}): the newest is the one a person is
   * looking at (a reopened tab, a restarted app whose old socket has not timed out yet), so a user is never locked
   * out by their own stale sockets, and one token still holds a bounded number.
   */
  void open(Principal principal, String device, ServerWebSocket socket, BacklogStart start) {
    Connection c = new Connection(principal, device, socket, this, config,
        new WriteBudget(config.writeBudget(), budgeted), start);
    socket.closeHandler(v -> c.closed());
    socket.exceptionHandler(e -> LOG.debug("{}: {}", c, e.toString()));
    socket.pongHandler(b -> c.lastHeard = System.currentTimeMillis());
    socket.textMessageHandler(text -> onFrame(c, text));
    // The protocol is JSON text: a binary message is refused (1003, unsupported data) rather than read and ignored.
    socket.binaryMessageHandler(b -> c.close((short) 1003, "frames are JSON text"));
    List<Connection> replaced = new ArrayList<>();
    byUser.compute(principal.userId(), (u, l) -> {
      List<Connection> list = l == null ? new CopyOnWriteArrayList<>() : l;
      List<Connection> evicted = SocketCap.oldestBeyond(list, config.maxSocketsPerUser() - 1);
      list.removeAll(evicted);
      replaced.addAll(evicted);
      list.add(c);
      return list;
    });
    open.incrementAndGet();
    open.addAndGet(-replaced.size());
    for (Connection old : replaced) {
      old.close(Connection.CLOSE_REPLACED, "more than " + config.maxSocketsPerUser()
          + " sockets for this user: the oldest is closed");
    }
    // Read after registering: an entry the reader passes from now on reaches this connection, and the backlog
    // read waits until the store holds everything the reader passed before (see read()).
    c.startBacklog(reader.seen(principal.userId()));
  }

  /** The offset of the last record of {@code key}'s inbox partition the reader has passed (-1: none yet). */
  long seen(String key) {
    return reader.seen(key);
  }

  /** False once the reader stopped with an error: live pushes have stopped, the instance is not ready. */
  boolean readerAlive() {
    return reader.alive();
  }

  void unregister(Connection c) {
    boolean[] removed = new boolean[1];
    byUser.computeIfPresent(c.user, (u, l) -> {
      removed[0] = l.remove(c);
      return l.isEmpty() ? null : l;
    });
    if (removed[0]) {
      open.decrementAndGet();
    }
  }

  /** Subscribes {@code c} to the timelines of the large groups it listens to, through this gateway's reader. */
  GroupListening.Subscriptions subscriptions(Connection c) {
    return new GroupListening.Subscriptions() {
      @Override
      public void subscribe(String group) {
        Gateway.this.subscribe(group, c);
      }

      @Override
      public void unsubscribe(String group) {
        Gateway.this.unsubscribe(group, c);
      }

      @Override
      public long seen(String group) {
        return Gateway.this.seen(Ids.groupTimeline(group));
      }
    };
  }

  /** From now on the reader offers the timeline entries of large group {@code group} to {@code c}. */
  void subscribe(String group, Connection c) {
    byGroup.compute(group, (g, l) -> {
      List<Connection> list = l == null ? new CopyOnWriteArrayList<>() : l;
      list.add(c);
      return list;
    });
    listened.incrementAndGet();
  }

  void unsubscribe(String group, Connection c) {
    boolean[] removed = new boolean[1];
    byGroup.computeIfPresent(group, (g, l) -> {
      removed[0] = l.remove(c);
      return l.isEmpty() ? null : l;
    });
    if (removed[0]) {
      listened.decrementAndGet();
    }
  }

  private void onFrame(Connection c, String text) {
    c.lastHeard = System.currentTimeMillis();
    switch (c.limiter.frame(WriteBudget.utf8Length(text))) {
      case TOO_LARGE -> {
        c.close(Connection.CLOSE_FRAME_TOO_LARGE, "frames are at most " + c.limiter.limits().maxFrameBytes()
            + " bytes");
        return;
      }
      case TOO_FAST -> {
        c.close(Connection.CLOSE_TOO_FAST, "more than " + c.limiter.limits().framesPerSecond() + " frames a second");
        return;
      }
      case ACCEPT -> {
      }
    }
    com.fasterxml.jackson.databind.JsonNode frame;
    try {
      frame = Json.MAPPER.readTree(text);
    } catch (java.io.IOException e) {
      c.error(null, "frames are JSON objects");
      return;
    }
    switch (frame.path("type").asText("")) {
      case "ack" -> c.ack(frame);
      case "send" -> Sends.send(api, c, (com.fasterxml.jackson.databind.node.ObjectNode) frame);
      case "ping" -> c.reply(Frames.PONG);
      default -> c.error(frame.path("clientMsgId").asText(null), "unknown frame type '"
          + frame.path("type").asText("") + "' (ack, send)");
    }
  }

  // ------------------------------------------------------------------------------------------------ callbacks

  void pushed(Connection c, long seq, String messageId, int attempt) {
    pushes.increment();
    if (seq >= 0) {
      output.delivery(c.user, c.device, seq, messageId, attempt);
      if (attempt > 1) {
        retries.increment();
      }
    }
  }

  void acked(Connection c, long seq) {
    acks.increment();
    output.cursor(c.user, c.device, seq);
    output.ack(c.user, c.device, seq);
  }

  void groupPosition(Connection c, String cursorDevice, long seq) {
    output.cursor(c.user, cursorDevice, seq);
  }

  void resynced(Connection c) {
    resyncs.increment();
  }

  void offline(Connection c) {
    offline.increment();
  }

  void later(long delayMs, Runnable task) {
    timer.schedule(task, delayMs, TimeUnit.MILLISECONDS);
  }

  int connections() {
    return open.get();
  }

  /** Pings every socket; one silent for two intervals (or whose token expired) is closed. */
  private void pingAll() {
    long now = System.currentTimeMillis();
    long silent = 2 * config.ping().toMillis() + 1_000;
    for (List<Connection> list : byUser.values()) {
      for (Connection c : list) {
        try {
          if (c.principal.expiresAt().toEpochMilli() < now) {
            c.close(Connection.CLOSE_UNAUTHORIZED, "token expired, reconnect with a new one");
          } else if (now - c.lastHeard > silent) {
            c.close((short) 1001, "no answer to pings");
          } else {
            c.socket.writePing(Buffer.buffer("p"));
          }
        } catch (RuntimeException e) {
          LOG.debug("ping {}: {}", c, e.toString());
        }
      }
    }
  }

  @Override
  public void close() {
    reader.close();
    timer.shutdownNow();
    for (List<Connection> list : byUser.values()) {
      for (Connection c : list) {
        c.close((short) 1001, "server shutting down");
      }
    }
    output.close();
  }
}
