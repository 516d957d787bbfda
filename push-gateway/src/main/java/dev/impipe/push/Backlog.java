package dev.impipe.push;

import dev.impipe.runtime.domain.Ids;
import java.util.ArrayDeque;
import java.util.Deque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backlog of one connection, read a page at a time through the merged sync API: the first page after the
 * committed cursor or the cursor the device sent ({@link BacklogStart}), each next one after the vector pushed so
 * far. A page is read only while the window of unACKed entries has room for it and at most half the write budget is
 * held, asks for no more entries than fit in the room ({@link PageSizer}), and is written while its frames fit in the
 * budget (the rest when it is half free again), so a slow device slows its own reads. Runs under the connection's lock.
 */
final class Backlog {

  private static final Logger LOG = LoggerFactory.getLogger(Backlog.class);

  private final Connection conn;
  private final Gateway gateway;
  private final PushConfig config;
  private final SocketWriter writer;
  private final PageSizer sizer;
  private final GroupListening listening;
  private final Positions positions;
  private final DeliveryWindow window;
  private final Deliveries deliveries;
  private final BacklogStart start;

  private boolean firstPage = true;
  private boolean fetching;
  private long minSeq = -1;
  /** The minSeq the page being read asked for: a higher {@code minSeq} since (a gap) needs another page. */
  private long minSeqAsked = -1;
  /** The page being written (null: none), and its entries not written yet (waiting for the budget). */
  private BacklogPage page;
  private final Deque<BacklogPage.Entry> rest = new ArrayDeque<>();

  Backlog(Connection conn, Gateway gateway, PushConfig config, SocketWriter writer, PageSizer sizer,
      GroupListening listening, Positions positions, DeliveryWindow window, Deliveries deliveries,
      BacklogStart start) {
    this.conn = conn;
    this.gateway = gateway;
    this.config = config;
    this.writer = writer;
    this.sizer = sizer;
    this.listening = listening;
    this.positions = positions;
    this.window = window;
    this.deliveries = deliveries;
    this.start = start;
  }

  /** Until the first page is written, the positions pushed are not known yet. */
  boolean beforeFirstPage() {
    return firstPage;
  }

  /** The next page waits until the store holds inbox offset {@code seq}. */
  void waitFor(long seq) {
    minSeq = Math.max(minSeq, seq);
  }

  void fetchNext() {
    if (!conn.inBacklog() || fetching) {
      return;
    }
    if (window.size() + config.page() > config.queue()) {
      return; // the device ACKs first; its ACK continues the backlog
    }
    if (!writer.roomForPage()) {
      // The write that brings the budget back to half continues the backlog.
      writer.whenHalfFree(() -> {
        synchronized (conn) {
          fetchNext();
        }
      });
      return;
    }
    fetching = true;
    minSeqAsked = minSeq;
    String path = Frames.syncPath(conn.user, conn.device, sizer.limit(writer.free()),
        firstPage ? start.after() : positions.vector().encode(), minSeq, listening.takeMinSeqs());
    gateway.api().get(path, conn.principal.token()).whenComplete(this::onPage);
  }

  private void onPage(ApiClient.Reply reply, Throwable failure) {
    synchronized (conn) {
      if (conn.isClosed()) {
        fetching = false;
        return;
      }
      if (failure == null && firstPage && !startAnswered(reply)) {
        return;
      }
      if (failure != null || reply.status() != 200) {
        fetching = false;
      }
      // 503 (store not ready) and 429 (this user's waiting requests at the store's bound): read again later.
      if (failure != null || reply.status() == 503 || reply.status() == 429) {
        gateway.later(failure == null && reply.status() == 429 ? 1_000 : 500, () -> {
          synchronized (conn) {
            fetchNext();
          }
        });
        return;
      }
      if (reply.status() == 401 || reply.status() == 403) {
        conn.close(Connection.CLOSE_UNAUTHORIZED, reply.error());
        return;
      }
      if (reply.status() != 200) {
        LOG.warn("Backlog of {} not readable: {} {}", conn, reply.status(), reply.error());
        conn.close(Connection.CLOSE_BACKLOG_FAILED, "backlog unavailable, reconnect");
        return;
      }
      if (firstPage && start.cursor() != null) {
        positions.startAfter(start.cursor());
      }
      page = BacklogPage.of(reply.body());
      listening.readLargeGroups(page.largeGroups());
      rest.clear();
      rest.addAll(page.entries());
      writePage();
    }
  }

  /**
   * The first page's answer as the start sees it ({@link BacklogStart#answered}): false when it was handled there (read
   * again after another cursor or later, or given up).
   */
  private boolean startAnswered(ApiClient.Reply reply) {
    BacklogStart.Decision decision = start.answered(reply.status(), reply.body(), reply.retryAfter());
    switch (decision.action()) {
      case BACKLOG -> {
        return true;
      }
      case READ_AGAIN -> {
        fetching = false;
        LOG.debug("{}: first page answered {}, read again after {} in {} ms", conn, reply.status(), start.after(),
            decision.delayMs());
        if (decision.delayMs() == 0) {
          fetchNext();
        } else {
          gateway.later(decision.delayMs(), () -> {
            synchronized (conn) {
              fetchNext();
            }
          });
        }
        return false;
      }
      case GIVE_UP -> {
        fetching = false;
        LOG.info("Backlog of {} not readable from the device's cursor: {}", conn, decision.reason());
        conn.close(Connection.CLOSE_BACKLOG_FAILED, "backlog unavailable, reconnect");
        return false;
      }
      default -> throw new IllegalStateException(decision.action().name());
    }
  }

  /**
   * Writes the page's entries while they fit in the write budget; the rest waits until the budget is half free
   * again, so a socket never holds more than its budget (one frame more when it held nothing).
   */
  private void writePage() {
    while (!rest.isEmpty()) {
      if (conn.isClosed()) {
        return;
      }
      if (!write(rest.peek())) {
        writer.whenHalfFree(() -> {
          synchronized (conn) {
            if (page != null) {
              writePage();
            }
          }
        });
        return;
      }
      rest.poll();
    }
    BacklogPage written = page;
    page = null;
    fetching = false;
    if (!conn.isClosed()) {
      endPage(written);
    }
  }

  /** One entry of a backlog page: false if its frame does not fit in the budget now. */
  private boolean write(BacklogPage.Entry entry) {
    if (entry.inbox()) {
      if (entry.seq() > positions.pushed()) {
        if (!deliveries.inbox(entry.seq(), Frames.inboxEntry(entry.json()), entry.messageId())) {
          return false;
        }
        listening.applyMembership(entry.seq(), entry.json());
      }
    } else if (Ids.isGroupTimeline(entry.source())) {
      String group = entry.source().substring(1);
      if (entry.seq() > positions.group(group)) {
        return deliveries.group(group, entry.seq(), entry.json());
      }
    }
    return true;
  }

  /** The whole page is written: where the store says the device is, and the next page or live. */
  private void endPage(BacklogPage written) {
    // Past other members' leaves the device need not see: where the store says it may commit.
    positions.pageEnded(written.next(), written.cursor());
    firstPage = false;
    if (written.hasMore() || listening.waiting() || minSeq > minSeqAsked) {
      fetchNext();
      return;
    }
    conn.live();
  }

  void clear() {
    rest.clear();
    page = null;
  }
}
