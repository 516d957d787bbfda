package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.http.JsonViews;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.runtime.auth.Principal;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.http.Json;
import io.vertx.core.http.ServerWebSocket;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One device's WebSocket. First the backlog: merged sync pages (the inbox with the user's large groups, exactly
 * like the sync API), the first after the committed cursor, each next one after the vector pushed so far; then live
 * entries from the gateway's reader: the user's inbox and the timelines {@code #groupId} of the large groups the
 * user reads. Entries that arrive while a page is being read wait in {@code pending} and go out after it, each
 * source skipping what was already pushed from it (the inbox by seq, each group by its timeline seq), so the
 * device sees every entry once and in its source's order.
 *
 * <p>Large groups: the sync page says which groups the user reads and in which conversation-seq intervals
 * ({@code largeGroups}); the connection listens to those timelines and pushes a live timeline entry when the
 * merged sync would show it ({@link GroupFeed}). A membership entry of a large group (joined, left, mode switch)
 * interrupts the live push: the connection reads on through the merged sync from the vector it pushed, which
 * orders the group's remaining entries and the membership entry as a sync does, and reads what the reader passed
 * in a newly read timeline before the connection listened to it ({@code groupMinSeq}: the store waits until it
 * holds that much). A leaver's feed stops at the leave and is dropped past it.
 *
 * <p>Memory per connection is bounded: {@code pending} and the pushed entries not yet ACKed (inbox and group) each
 * hold at most {@link PushConfig#queue()} entries (the unACKed ones as seqs and cursors, not frames: a redelivery
 * reads the entry again), and every frame written (backlog, live, replies) draws from one {@link WriteBudget} of
 * {@link PushConfig#writeBudget()} bytes until the network took it; a device that falls further behind is told to
 * resync and closed, and reconnecting resumes from its committed cursor. The backlog is read a page at a time, only
 * while the window has room and at most half the budget is held, and a page asks for no more entries than fit in
 * the room ({@link PageSizer}), so a slow device slows its own reads.
 */
final class Connection {

  private static final Logger LOG = LoggerFactory.getLogger(Connection.class);

  /** Close codes (4000-4999 are the application's). */
  static final short CLOSE_OFFLINE = 4000;
  static final short CLOSE_UNAUTHORIZED = 4001;
  static final short CLOSE_RESYNC = 4008;
  static final short CLOSE_FRAME_TOO_LARGE = 4009;
  static final short CLOSE_BACKLOG_FAILED = 4011;
  static final short CLOSE_REPLACED = 4012;
  static final short CLOSE_TOO_FAST = 4029;

  private enum Phase { BACKLOG, LIVE, CLOSED }

  /** A live entry from the reader: of the inbox ({@code group} null) or of a group's timeline. */
  private record Live(String group, long seq, InboxEntry entry) {}

  final Principal principal;
  final String user;
  final String device;
  final ServerWebSocket socket;
  private final Gateway gateway;
  private final PushConfig config;
  private final SocketWriter writer;
  private final PageSizer sizer;
  final FrameLimiter limiter;

  private Phase phase = Phase.BACKLOG;
  private boolean firstPage = true;
  /** Whether the {@code synced} frame (the first backlog read to its end) was sent. */
  private boolean synced;
  private boolean fetching;
  /** Inbox seq of the last entry pushed (or the committed cursor, once the first page told it). */
  private long pushed = -1;
  /** Per large group: timeline seq of the last entry pushed (or the position a page reported). */
  private final TreeMap<String, Long> groups = new TreeMap<>();
  /** The large groups whose timelines this connection listens to. */
  private final GroupListening listening;
  private long minSeq = -1;
  /** The minSeq the page being read asked for: a higher {@code minSeq} since (a gap) needs another page. */
  private long minSeqAsked = -1;
  private final Deque<Live> pending = new ArrayDeque<>();
  private final DeliveryWindow window = new DeliveryWindow();
  /** The backlog page being written (null: none), and its entries not written yet (waiting for the budget). */
  private JsonNode page;
  private final Deque<JsonNode> pageRest = new ArrayDeque<>();
  private long committedInbox = -1;
  private final Map<String, Long> committedGroups = new HashMap<>();
  volatile long lastHeard = System.currentTimeMillis();

  final long openedAt = System.nanoTime();

  Connection(Principal principal, String device, ServerWebSocket socket, Gateway gateway, PushConfig config,
      WriteBudget budget) {
    this.principal = principal;
    this.user = principal.userId();
    this.device = device;
    this.socket = socket;
    this.gateway = gateway;
    this.config = config;
    this.writer = new SocketWriter(socket::writeTextMessage, budget);
    this.sizer = new PageSizer(config.page(), budget.limit());
    this.limiter = new FrameLimiter(config.limits(), System::nanoTime);
    this.listening = new GroupListening(new GroupListening.Subscriptions() {
      @Override
      public void subscribe(String group) {
        gateway.subscribe(group, Connection.this);
      }

      @Override
      public void unsubscribe(String group) {
        gateway.unsubscribe(group, Connection.this);
      }

      @Override
      public long seen(String group) {
        return gateway.seen(Ids.groupTimeline(group));
      }
    }, this::toString);
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
      queue(new Live(null, seq, entry));
      return;
    }
    pushLive(seq, entry);
  }

  /** A committed entry of the timeline of large group {@code group}, from the gateway's reader (offset order). */
  synchronized void offerGroup(String group, long seq, InboxEntry entry) {
    if (phase == Phase.CLOSED || seq <= groups.getOrDefault(group, -1L)) {
      return;
    }
    if (phase == Phase.BACKLOG) {
      queue(new Live(group, seq, entry));
      return;
    }
    pushGroupLive(group, seq, entry);
  }

  private void queue(Live live) {
    if (pending.size() >= config.queue()) {
      resync("more than " + config.queue() + " entries waiting while the backlog is sent");
      return;
    }
    pending.add(live);
  }

  private void pushLive(long seq, InboxEntry entry) {
    if (listening.interrupts(entry)) {
      catchUp(seq, entry);
      return;
    }
    if (!room()) {
      return;
    }
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("source", "inbox");
    json.putAll(JsonViews.inboxEntry(seq, entry));
    if (!push(seq, Json.MAPPER.valueToTree(json), entry.getMessageId())) {
      resync("the device does not read fast enough");
    }
  }

  private void pushGroupLive(String group, long seq, InboxEntry entry) {
    GroupFeed feed = listening.feed(group);
    if (feed == null || seq <= groups.getOrDefault(group, -1L)) {
      return;
    }
    switch (feed.offer(user, entry.getType(), entry.getConversationSeq(), entry.getSenderId())) {
      case PUSH -> {
        if (room()) {
          Map<String, Object> json = new LinkedHashMap<>();
          json.put("source", Ids.groupTimeline(group));
          json.putAll(JsonViews.inboxEntry(seq, entry));
          if (!pushGroupEntry(group, seq, Json.MAPPER.valueToTree(json))) {
            resync("the device does not read fast enough");
          }
        }
      }
      case BEYOND -> listening.stop(group);
      case SKIP -> {
      }
    }
  }

  /** False (and the device told to resync) when the window of unACKed entries or the socket is full. */
  private boolean room() {
    if (socket.isClosed()) {
      closed(); // closed by the peer; the close handler may not have run yet
      return false;
    }
    if (window.size() >= config.queue()) {
      resync("more than " + config.queue() + " entries not ACKed");
      return false;
    }
    return true;
  }

  /**
   * Live push pauses at {@code entry} (a membership change of a large group): the next pages, read after what was
   * pushed, bring it in the merged order; a group being opened is listened to first, and the page waits until its
   * timeline holds what the reader passed before (entries the connection may have skipped or not seen).
   */
  private void catchUp(long seq, InboxEntry entry) {
    phase = Phase.BACKLOG;
    pending.addFirst(new Live(null, seq, entry));
    minSeq = Math.max(minSeq, seq);
    String group = entry.getConversationId();
    if (Boolean.TRUE.equals(entry.getReadDiffusion())) {
      listening.listenKeeping(group);
    }
    fetchNext();
  }

  /** Pushes an inbox entry if its frame fits in the write budget; false, nothing changed, if it does not. */
  private boolean push(long seq, JsonNode entry, String messageId) {
    String cursor = SyncCursor.of(seq, groups).encode();
    int bytes = writer.tryWrite(Frames.entry(entry, cursor));
    if (bytes < 0) {
      return false;
    }
    sizer.seen(bytes);
    pushed = seq;
    window.pushed(seq, messageId, cursor);
    gateway.pushed(this, seq, messageId, 1);
    return true;
  }

  /**
   * A group entry, if its frame fits (false, nothing changed, if not): no Delivery (the ACK wheel counts inbox
   * seqs); the device's ACK commits the group position.
   */
  private boolean pushGroupEntry(String group, long seq, JsonNode entry) {
    Long before = groups.put(group, seq);
    int bytes = writer.tryWrite(Frames.entry(entry, vector().encode()));
    if (bytes < 0) {
      if (before == null) {
        groups.remove(group);
      } else {
        groups.put(group, before);
      }
      return false;
    }
    sizer.seen(bytes);
    window.pushedGroup(group, seq);
    gateway.pushed(this, -1, null, 0);
    return true;
  }

  /**
   * A reply to the device ({@code pong}, {@code sent}, {@code error}): from the same budget as entries; a device
   * that leaves the budget full is told to resync.
   */
  synchronized void reply(String frame) {
    if (phase == Phase.CLOSED) {
      return;
    }
    if (writer.tryWrite(frame) < 0) {
      resync("the device does not read fast enough");
    }
  }

  private SyncCursor vector() {
    return SyncCursor.of(Math.max(pushed, -1), groups);
  }

  // ------------------------------------------------------------------------------------------------ backlog

  private void fetchNext() {
    if (phase != Phase.BACKLOG || fetching) {
      return;
    }
    if (window.size() + config.page() > config.queue()) {
      return; // the device ACKs first; its ACK continues the backlog
    }
    if (!writer.roomForPage()) {
      // The write that brings the budget back to half continues the backlog.
      writer.whenHalfFree(() -> {
        synchronized (this) {
          fetchNext();
        }
      });
      return;
    }
    fetching = true;
    minSeqAsked = minSeq;
    String path = Frames.syncPath(user, device, sizer.limit(writer.free()), firstPage ? null : vector().encode(),
        minSeq, listening.takeMinSeqs());
    gateway.api().get(path, principal.token()).whenComplete(this::onPage);
  }

  private synchronized void onPage(ApiClient.Reply reply, Throwable failure) {
    if (phase == Phase.CLOSED) {
      fetching = false;
      return;
    }
    if (failure != null || reply.status() != 200) {
      fetching = false;
    }
    // 503 (store not ready) and 429 (this user's waiting requests at the store's bound): read again later.
    if (failure != null || reply.status() == 503 || reply.status() == 429) {
      gateway.later(failure == null && reply.status() == 429 ? 1_000 : 500, () -> {
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
    page = reply.body();
    listening.readLargeGroups(page.path("largeGroups"));
    pageRest.clear();
    page.path("entries").forEach(pageRest::add);
    writePage();
  }

  /**
   * Writes the page's entries while they fit in the write budget; the rest waits until the budget is half free
   * again, so a socket never holds more than its budget (one frame more when it held nothing).
   */
  private void writePage() {
    while (!pageRest.isEmpty()) {
      if (phase == Phase.CLOSED) {
        return;
      }
      if (!writeBacklogEntry(pageRest.peek())) {
        writer.whenHalfFree(() -> {
          synchronized (this) {
            if (page != null) {
              writePage();
            }
          }
        });
        return;
      }
      pageRest.poll();
    }
    JsonNode body = page;
    page = null;
    fetching = false;
    if (phase != Phase.CLOSED) {
      endPage(body);
    }
  }

  /** One entry of a backlog page: false if its frame does not fit in the budget now. */
  private boolean writeBacklogEntry(JsonNode entry) {
    String source = entry.path("source").asText("inbox");
    long seq = entry.path("seq").asLong();
    if (source.equals("inbox")) {
      if (seq > pushed) {
        String messageId = entry.path("messageId").isTextual() ? entry.get("messageId").asText() : null;
        if (!push(seq, Frames.inboxEntry(entry), messageId)) {
          return false;
        }
        listening.applyMembership(seq, entry);
      }
    } else if (Ids.isGroupTimeline(source)) {
      String group = source.substring(1);
      if (seq > groups.getOrDefault(group, -1L)) {
        return pushGroupEntry(group, seq, entry);
      }
    }
    return true;
  }

  /** The whole page is written: where the store says the device is, and the next page or live. */
  private void endPage(JsonNode body) {
    pushed = Math.max(pushed, body.path("next").asLong(pushed));
    if (body.path("cursor").isTextual()) {
      try {
        // Past other members' leaves the device need not see: where the store says it may commit.
        SyncCursor.decode(body.get("cursor").asText()).groups().forEach((g, seq) -> groups.merge(g, seq, Math::max));
      } catch (IllegalArgumentException e) {
        LOG.debug("unreadable sync cursor for {}: {}", this, e.toString());
      }
    }
    firstPage = false;
    if (body.path("hasMore").asBoolean(false) || listening.waiting() || minSeq > minSeqAsked) {
      fetchNext();
      return;
    }
    phase = Phase.LIVE;
    if (!synced) {
      // Once per connection: everything up to the committed cursor's end is on its way; live entries follow.
      synced = true;
      writer.write(Frames.synced(vector().encode()));
    }
    while (!pending.isEmpty() && phase == Phase.LIVE) {
      Live live = pending.poll();
      if (live.group() != null) {
        pushGroupLive(live.group(), live.seq(), live.entry());
      } else if (live.seq() > pushed) {
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
    window.ackInbox(cursor.inbox());
    if (cursor.inbox() > committedInbox) {
      committedInbox = cursor.inbox();
      gateway.acked(this, cursor.inbox());
    }
    for (Map.Entry<String, Long> g : cursor.groups().entrySet()) {
      window.ackGroup(g.getKey(), g.getValue());
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
    boolean ours = timeout.getSeqs().stream().anyMatch(window::contains);
    if (!ours) {
      return; // for pushes of an earlier connection, or ACKed meanwhile
    }
    if (last) {
      gateway.offline(this);
      close(CLOSE_OFFLINE, "ACK timeout: device marked offline, reconnect to resume");
      return;
    }
    redeliver(window.unacked(timeout.getSeqs()), timeout.getAttempts() + 1);
  }

  /**
   * Pushes again the unACKed entries of a retry: read again from the store (the window keeps their cursors, not
   * their frames), each with the cursor it first went out with.
   */
  private void redeliver(TreeMap<Long, DeliveryWindow.Pushed> again, int attempt) {
    if (again.isEmpty()) {
      return;
    }
    long first = again.firstKey();
    // Inbox seqs are partition offsets: the user's entries between the first and last are at most that many. The
    // read is sized to the write budget like a backlog page; what it leaves out, the next retry brings.
    int span = (int) Math.min(sizer.limit(writer.free()), again.lastKey() - first + 1);
    gateway.api().get(Frames.inboxPath(user, first, span), principal.token()).whenComplete((reply, failure) -> {
      if (failure != null || reply.status() != 200) {
        return; // the next retry AckTimeout tries again
      }
      synchronized (this) {
        for (JsonNode entry : reply.body().path("entries")) {
          long seq = entry.path("seq").asLong(-1);
          DeliveryWindow.Pushed p = again.get(seq);
          if (phase == Phase.CLOSED || p == null || !window.contains(seq)) {
            continue;
          }
          if (writer.tryWrite(Frames.entry(Frames.inboxEntry(entry), p.cursor())) < 0) {
            resync("the device does not read fast enough");
            return;
          }
          gateway.pushed(this, seq, p.messageId(), attempt);
        }
      }
    });
  }

  /**
   * The reader passed a record of this user's inbox ({@code group} null) or of a large group's timeline at
   * {@code offset} and could not decode it: the connection reads on through the store (a page after what it pushed,
   * waiting until the store holds that offset), so the device misses nothing the store has.
   */
  synchronized void gap(String group, long offset) {
    if (phase == Phase.CLOSED) {
      return;
    }
    if (group == null) {
      minSeq = Math.max(minSeq, offset);
    } else {
      listening.waitFor(group, offset);
    }
    phase = Phase.BACKLOG;
    fetchNext();
  }

  void error(String clientMsgId, String message) {
    reply(Frames.error(clientMsgId, 0, message));
  }

  // ------------------------------------------------------------------------------------------------ closing

  private void resync(String reason) {
    gateway.resynced(this);
    writer.write(Frames.resync(reason,
        committedInbox >= 0 ? SyncCursor.of(committedInbox, committedGroups).encode() : null));
    close(CLOSE_RESYNC, "resync from your cursor");
  }

  synchronized void close(short code, String reason) {
    if (phase == Phase.CLOSED) {
      return;
    }
    phase = Phase.CLOSED;
    forget();
    String shortReason = reason.length() > 120 ? reason.substring(0, 120) : reason;
    socket.close(code, shortReason);
  }

  /** Called when the socket closed, whoever closed it. */
  synchronized void closed() {
    phase = Phase.CLOSED;
    forget();
  }

  private void forget() {
    pending.clear();
    pageRest.clear();
    page = null;
    window.clear();
    writer.clear();
    listening.stopAll();
    gateway.unregister(this);
  }

  @Override
  public String toString() {
    return "Connection[" + user + "/" + device + "]";
  }
}
