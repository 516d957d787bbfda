package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.http.JsonViews;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.runtime.auth.Principal;
import dev.impipe.runtime.http.Json;
import io.vertx.core.http.ServerWebSocket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One device's WebSocket. First the backlog (the merged sync after the committed cursor, then the inbox page by
 * page), then live entries from the gateway's inbox reader; entries that arrive while the backlog is being sent
 * wait in {@code pending} and go out after it, skipping what the backlog already held, so the device sees every
 * entry once and in seq order.
 *
 * <p>Memory per connection is bounded: {@code pending} and {@code inflight} (pushed, not yet ACKed) each hold at most
 * {@link PushConfig#queue()} entries, the socket's write queue {@link PushConfig#writeQueueBytes()}; a device
 * that falls further behind is told to resync and closed, and reconnecting resumes from its committed cursor.
 * The backlog is read a page at a time and only while the window has room, so a slow device slows its own reads.
 */
final class Connection {

  private static final Logger LOG = LoggerFactory.getLogger(Connection.class);

  /** Close codes (4000-4999 are the application's). */
  static final short CLOSE_OFFLINE = 4000;
  static final short CLOSE_UNAUTHORIZED = 4001;
  static final short CLOSE_RESYNC = 4008;
  static final short CLOSE_BACKLOG_FAILED = 4011;

  private enum Phase { BACKLOG, LIVE, CLOSED }

  private record Live(long seq, InboxEntry entry) {}

  private record Inflight(String frame, String messageId) {}

  final Principal principal;
  final String user;
  final String device;
  final ServerWebSocket socket;
  private final Gateway gateway;
  private final PushConfig config;

  private Phase phase = Phase.BACKLOG;
  private boolean firstPage = true;
  private boolean fetching;
  /** Inbox seq of the last entry pushed (or the committed cursor, once the first page told it). */
  private long pushed = -1;
  private final TreeMap<String, Long> groups = new TreeMap<>();
  private long minSeq = -1;
  private final Deque<Live> pending = new ArrayDeque<>();
  private final TreeMap<Long, Inflight> inflight = new TreeMap<>();
  private long committedInbox = -1;
  private final Map<String, Long> committedGroups = new java.util.HashMap<>();
  volatile long lastHeard = System.currentTimeMillis();

  Connection(Principal principal, String device, ServerWebSocket socket, Gateway gateway, PushConfig config) {
    this.principal = principal;
    this.user = principal.userId();
    this.device = device;
    this.socket = socket;
    this.gateway = gateway;
    this.config = config;
  }

  /** The inbox record offset every entry below which this connection's backlog must include. */
  synchronized void startBacklog(long minSeq) {
    this.minSeq = minSeq;
    fetchNext();
  }

  // ------------------------------------------------------------------------------------------------ live entries

  /** A committed inbox entry of this user, from the gateway's reader (offset order per partition). */
  synchronized void offer(long seq, InboxEntry entry) {
    if (phase == Phase.CLOSED || (!firstPage && seq <= pushed)) {
      return;
    }
    if (phase == Phase.BACKLOG) {
      if (pending.size() >= config.queue()) {
        resync("more than " + config.queue() + " entries waiting while the backlog is sent");
        return;
      }
      pending.add(new Live(seq, entry));
      return;
    }
    pushLive(seq, entry);
  }

  private void pushLive(long seq, InboxEntry entry) {
    if (inflight.size() >= config.queue() || socket.writeQueueFull()) {
      resync(inflight.size() >= config.queue() ? "more than " + config.queue() + " entries not ACKed"
          : "the device does not read fast enough");
      return;
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("source", "inbox");
    json.putAll(JsonViews.inboxEntry(seq, entry));
    push(seq, Json.MAPPER.valueToTree(json), entry.getMessageId());
  }

  private void push(long seq, JsonNode entry, String messageId) {
    pushed = seq;
    String frame = frame(entry);
    inflight.put(seq, new Inflight(frame, messageId));
    socket.writeTextMessage(frame);
    gateway.pushed(this, seq, messageId, 1);
  }

  private void pushGroupEntry(String group, long seq, JsonNode entry) {
    groups.merge(group, seq, Math::max);
    socket.writeTextMessage(frame(entry));
    gateway.pushed(this, -1, null, 0);
  }

  private String frame(JsonNode entry) {
    ObjectNode frame = Json.MAPPER.createObjectNode();
    frame.put("type", "entry");
    frame.set("entry", entry);
    frame.put("cursor", SyncCursor.of(Math.max(pushed, -1), groups).encode());
    return frame.toString();
  }

  // ------------------------------------------------------------------------------------------------ backlog

  private void fetchNext() {
    if (phase != Phase.BACKLOG || fetching) {
      return;
    }
    if (inflight.size() + config.page() > config.queue()) {
      return; // the device ACKs first; its ACK continues the backlog
    }
    if (socket.writeQueueFull()) {
      socket.drainHandler(v -> {
        synchronized (this) {
          fetchNext();
        }
      });
      return;
    }
    fetching = true;
    String u = URLEncoder.encode(user, StandardCharsets.UTF_8);
    String path = firstPage
        ? "/v1/users/" + u + "/devices/" + URLEncoder.encode(device, StandardCharsets.UTF_8) + "/sync?limit="
            + config.page()
        : "/v1/users/" + u + "/inbox?after=" + pushed + "&limit=" + config.page();
    if (minSeq >= 0) {
      path += "&minSeq=" + minSeq;
    }
    gateway.api().get(path, principal.token()).whenComplete(this::onPage);
  }

  private synchronized void onPage(ApiClient.Reply reply, Throwable failure) {
    fetching = false;
    if (phase == Phase.CLOSED) {
      return;
    }
    if (failure != null || reply.status() == 503) {
      gateway.later(500, () -> {
        synchronized (this) {
          fetchNext();
        }
      });
      return;
    }
    if (reply.status() == 401 || reply.status() == 403) {
      close(CLOSE_UNAUTHORIZED, reply.error());
      return;
    }
    if (reply.status() != 200) {
      LOG.warn("Backlog of {}/{} not readable: {} {}", user, device, reply.status(), reply.error());
      close(CLOSE_BACKLOG_FAILED, "backlog unavailable, reconnect");
      return;
    }
    JsonNode body = reply.body();
    for (JsonNode entry : body.path("entries")) {
      String source = entry.path("source").asText("inbox");
      long seq = entry.path("seq").asLong();
      if (source.equals("inbox")) {
        if (firstPage || seq > pushed) {
          ObjectNode withSource = Json.MAPPER.createObjectNode();
          withSource.put("source", "inbox");
          withSource.setAll((ObjectNode) entry);
          push(seq, withSource, entry.path("messageId").isTextual() ? entry.get("messageId").asText() : null);
        }
      } else {
        pushGroupEntry(source.substring(1), seq, entry);
      }
    }
    pushed = Math.max(pushed, body.path("next").asLong(pushed));
    if (firstPage) {
      committedInbox = pushed; // a sync page starts after the committed cursor
    }
    firstPage = false;
    if (body.path("hasMore").asBoolean(false)) {
      fetchNext();
      return;
    }
    phase = Phase.LIVE;
    while (!pending.isEmpty() && phase == Phase.LIVE) {
      Live live = pending.poll();
      if (live.seq() > pushed) {
        pushLive(live.seq(), live.entry());
      }
    }
  }

  // ------------------------------------------------------------------------------------------------ from the device

  /** {@code {"type":"ack","seq":n}} or {@code {"type":"ack","cursor":"..."}}: cumulative. */
  synchronized void ack(JsonNode frame) {
    SyncCursor cursor;
    try {
      if (frame.hasNonNull("cursor")) {
        cursor = SyncCursor.decode(frame.get("cursor").asText());
      } else if (frame.path("seq").canConvertToLong() && frame.path("seq").isIntegralNumber()) {
        cursor = SyncCursor.of(frame.get("seq").asLong(), Map.of());
      } else {
        error(null, "an ack needs \"seq\" or \"cursor\"");
        return;
      }
    } catch (IllegalArgumentException e) {
      error(null, "not a cursor this gateway sent");
      return;
    }
    if (cursor.inbox() > pushed) {
      error(null, "ack for seq " + cursor.inbox() + ", beyond what was pushed (" + pushed + ")");
      return;
    }
    for (Map.Entry<String, Long> g : cursor.groups().entrySet()) {
      if (g.getValue() > groups.getOrDefault(g.getKey(), -1L)) {
        error(null, "ack for group " + g.getKey() + " beyond what was pushed");
        return;
      }
    }
    inflight.headMap(cursor.inbox(), true).clear();
    if (cursor.inbox() > committedInbox) {
      committedInbox = cursor.inbox();
      gateway.acked(this, cursor.inbox());
    }
    for (Map.Entry<String, Long> g : cursor.groups().entrySet()) {
      if (g.getValue() > committedGroups.getOrDefault(g.getKey(), -1L)) {
        committedGroups.put(g.getKey(), g.getValue());
        gateway.groupPosition(this, SyncCursor.groupDevice(device, g.getKey()), g.getValue());
      }
    }
    fetchNext();
  }

  /** A retry or final AckTimeout for this device. */
  synchronized void ackTimeout(AckTimeout timeout, boolean last) {
    if (phase == Phase.CLOSED) {
      return;
    }
    boolean ours = timeout.getSeqs().stream().anyMatch(inflight::containsKey);
    if (!ours) {
      return; // for pushes of an earlier connection, or ACKed meanwhile
    }
    if (last) {
      gateway.offline(this);
      close(CLOSE_OFFLINE, "ACK timeout: device marked offline, reconnect to resume");
      return;
    }
    for (Long seq : timeout.getSeqs()) {
      Inflight f = inflight.get(seq);
      if (f != null) {
        socket.writeTextMessage(f.frame());
        gateway.pushed(this, seq, f.messageId(), timeout.getAttempts() + 1);
      }
    }
  }

  void error(String clientMsgId, String message) {
    ObjectNode frame = Json.MAPPER.createObjectNode();
    frame.put("type", "error");
    if (clientMsgId != null) {
      frame.put("clientMsgId", clientMsgId);
    }
    frame.put("error", message);
    socket.writeTextMessage(frame.toString());
  }

  // ------------------------------------------------------------------------------------------------ closing

  private void resync(String reason) {
    gateway.resynced(this);
    ObjectNode frame = Json.MAPPER.createObjectNode();
    frame.put("type", "resync");
    frame.put("reason", reason);
    frame.put("cursor", SyncCursor.of(committedInbox, committedGroups).encode());
    socket.writeTextMessage(frame.toString());
    close(CLOSE_RESYNC, "resync from your cursor");
  }

  synchronized void close(short code, String reason) {
    if (phase == Phase.CLOSED) {
      return;
    }
    phase = Phase.CLOSED;
    pending.clear();
    inflight.clear();
    gateway.unregister(this);
    String shortReason = reason.length() > 120 ? reason.substring(0, 120) : reason;
    socket.close(code, shortReason);
  }

  /** Called when the socket closed, whoever closed it. */
  synchronized void closed() {
    phase = Phase.CLOSED;
    pending.clear();
    inflight.clear();
    gateway.unregister(this);
  }

  @Override
  public String toString() {
    return "Connection[" + user + "/" + device + "]";
  }
}
