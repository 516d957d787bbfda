package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.edge.auth.Principal;
import dev.impipe.runtime.domain.Ids;
import io.vertx.core.http.ServerWebSocket;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;

/**
 * One device's WebSocket. First the backlog: merged sync pages (the inbox with the user's large groups, exactly
 * like the sync API), the first after the committed cursor (or the device's own, {@link BacklogStart}), each next
 * one after the vector pushed so far; then live entries from the gateway's reader: the user's inbox and the
 * timelines {@code #groupId} of the large groups the user reads. Entries that arrive while a page is being read wait
 * in {@code pending} and go out after it, each source skipping what was already pushed from it (the inbox by seq,
 * each group by its timeline seq), so the device sees every entry once and in its source's order.
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
 * resync and closed, and reconnecting resumes from its committed cursor. The parts: {@link Backlog} (paging),
 * {@link Deliveries} (writing entries, redelivery), {@link Positions} (pushed and committed), {@link DeliveryWindow}.
 */
final class Connection {

  /** Close codes (4000-4999 are the application's). */
  static final short CLOSE_OFFLINE = 4000;
  static final short CLOSE_UNAUTHORIZED = 4001;
  static final short CLOSE_RESYNC = 4008;
  static final short CLOSE_FRAME_TOO_LARGE = 4009;
  static final short CLOSE_BACKLOG_FAILED = 4011;
  static final short CLOSE_REPLACED = 4012;
  static final short CLOSE_MOVED = 4013;
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
  final FrameLimiter limiter;

  private Phase phase = Phase.BACKLOG;
  /** Whether the {@code synced} frame (the first backlog read to its end) was sent. */
  private boolean synced;
  private final Positions positions = new Positions();
  /** The large groups whose timelines this connection listens to. */
  private final GroupListening listening;
  private final Deque<Live> pending = new ArrayDeque<>();
  private final DeliveryWindow window = new DeliveryWindow();
  private final Backlog backlog;
  private final Deliveries deliveries;
  volatile long lastHeard = System.currentTimeMillis();

  final long openedAt = System.nanoTime();

  Connection(Principal principal, String device, ServerWebSocket socket, Gateway gateway, PushConfig config,
      WriteBudget budget, BacklogStart start) {
    this.principal = principal;
    this.user = principal.userId();
    this.device = device;
    this.socket = socket;
    this.gateway = gateway;
    this.config = config;
    this.writer = new SocketWriter(socket::writeTextMessage, budget, gateway.timings()::written);
    PageSizer sizer = new PageSizer(config.page(), budget.limit());
    this.limiter = new FrameLimiter(config.limits(), System::nanoTime);
    this.listening = new GroupListening(gateway.subscriptions(this), this::toString);
    this.deliveries = new Deliveries(this, gateway, writer, sizer, positions, window);
    this.backlog = new Backlog(this, gateway, config, writer, sizer, listening, positions, window, deliveries,
        start);
  }

  /** The inbox record offset every entry below which this connection's backlog must include. */
  synchronized void startBacklog(long minSeq) {
    backlog.waitFor(minSeq);
    backlog.fetchNext();
  }

  /** Reading the backlog (not live, not closed). */
  boolean inBacklog() {
    return phase == Phase.BACKLOG;
  }

  boolean isClosed() {
    return phase == Phase.CLOSED;
  }

  // ------------------------------------------------------------------------------------------------ live entries

  /** A committed inbox entry of this user, from the gateway's reader (offset order per partition). */
  synchronized void offer(long seq, InboxEntry entry) {
    if (backlog.beforeFirstPage() || seq > positions.pushed()) {
      take(new Live(null, seq, entry));
    }
  }

  /** A committed entry of the timeline of large group {@code group}, from the gateway's reader (offset order). */
  synchronized void offerGroup(String group, long seq, InboxEntry entry) {
    if (seq > positions.group(group)) {
      take(new Live(group, seq, entry));
    }
  }

  /** Pushes a live entry now, or after the backlog being read (a bounded wait). */
  private void take(Live live) {
    if (phase == Phase.CLOSED) {
      return;
    }
    if (phase == Phase.LIVE) {
      if (live.group() == null) {
        pushLive(live.seq(), live.entry());
      } else {
        pushGroupLive(live.group(), live.seq(), live.entry());
      }
    } else if (pending.size() >= config.queue()) {
      resync("more than " + config.queue() + " entries waiting while the backlog is sent");
    } else {
      pending.add(live);
    }
  }

  private void pushLive(long seq, InboxEntry entry) {
    if (listening.interrupts(entry)) {
      catchUp(seq, entry);
      return;
    }
    if (!room()) {
      return;
    }
    if (!deliveries.inbox(seq, Frames.live("inbox", seq, entry), entry.getMessageId())) {
      resync("the device does not read fast enough");
    }
  }

  private void pushGroupLive(String group, long seq, InboxEntry entry) {
    GroupFeed feed = listening.feed(group);
    if (feed == null || seq <= positions.group(group)) {
      return;
    }
    switch (feed.offer(user, entry.getType(), entry.getConversationSeq(), entry.getSenderId())) {
      case PUSH -> {
        if (room() && !deliveries.group(group, seq, Frames.live(Ids.groupTimeline(group), seq, entry))) {
          resync("the device does not read fast enough");
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
    backlog.waitFor(seq);
    if (Boolean.TRUE.equals(entry.getReadDiffusion())) {
      listening.listenKeeping(entry.getConversationId());
    }
    backlog.fetchNext();
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

  // ------------------------------------------------------------------------------------------------ backlog

  /** The backlog is read to its end: live from here, first what waited meanwhile. */
  void live() {
    phase = Phase.LIVE;
    if (!synced) {
      // Once per connection: everything up to the committed cursor's end is on its way; live entries follow.
      synced = true;
      writer.write(Frames.synced(positions.vector().encode()));
    }
    while (!pending.isEmpty() && phase == Phase.LIVE) {
      Live live = pending.poll();
      if (live.group() != null) {
        pushGroupLive(live.group(), live.seq(), live.entry());
      } else if (live.seq() > positions.pushed()) {
        pushLive(live.seq(), live.entry());
      }
    }
  }

  // ------------------------------------------------------------------------------------------------ from the device

  /** {@code {"type":"ack","seq":n}} or {@code {"type":"ack","cursor":"..."}}: cumulative. */
  synchronized void ack(JsonNode frame) {
    SyncCursor cursor;
    try {
      cursor = Frames.ackCursor(frame, positions.generation());
    } catch (IllegalArgumentException e) {
      error(null, e.getMessage());
      return;
    }
    String refusal = positions.refusal(cursor);
    if (refusal != null) {
      error(null, refusal);
      return;
    }
    window.ackInbox(cursor.inbox());
    if (positions.commitInbox(cursor.inbox())) {
      gateway.acked(this, cursor.inbox());
    }
    for (Map.Entry<String, Long> g : cursor.groups().entrySet()) {
      window.ackGroup(g.getKey(), g.getValue());
      if (positions.commitGroup(g.getKey(), g.getValue())) {
        gateway.groupPosition(this, SyncCursor.groupDevice(device, g.getKey()), g.getValue());
      }
    }
    backlog.fetchNext();
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
    deliveries.redeliver(window.unacked(timeout.getSeqs()), timeout.getAttempts() + 1);
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
      backlog.waitFor(offset);
    } else {
      listening.waitFor(group, offset);
    }
    phase = Phase.BACKLOG;
    backlog.fetchNext();
  }

  void error(String clientMsgId, String message) {
    reply(Frames.error(clientMsgId, 0, message));
  }

  // ------------------------------------------------------------------------------------------------ closing

  /** Tells the device to resync from its committed cursor, and closes. */
  void resync(String reason) {
    gateway.resynced(this);
    writer.write(Frames.resync(reason, positions.committed()));
    close(CLOSE_RESYNC, "resync from your cursor");
  }

  /** Sends the device to the instance reading its user's partition ({@code url} null: none known yet), and closes. */
  synchronized void redirect(String url, String reason) {
    if (phase == Phase.CLOSED) {
      return;
    }
    writer.write(Frames.redirect(url, reason));
    close(CLOSE_MOVED, "moved: reconnect to the url of the redirect frame");
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
    backlog.clear();
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
