package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.TreeMap;

/**
 * Writes one connection's entries: each frame only if it fits in the write budget (false, and nothing changed, if
 * it does not), recording what went out in the positions and the window of unACKed entries; and the redelivery of
 * unACKed entries a retry asks for, read again from the store. Runs under the connection's lock.
 */
final class Deliveries {

  private final Connection conn;
  private final Gateway gateway;
  private final SocketWriter writer;
  private final PageSizer sizer;
  private final Positions positions;
  private final DeliveryWindow window;

  Deliveries(Connection conn, Gateway gateway, SocketWriter writer, PageSizer sizer, Positions positions,
      DeliveryWindow window) {
    this.conn = conn;
    this.gateway = gateway;
    this.writer = writer;
    this.sizer = sizer;
    this.positions = positions;
    this.window = window;
  }

  /** Pushes an inbox entry if its frame fits in the write budget; false, nothing changed, if it does not. */
  boolean inbox(long seq, JsonNode entry, String messageId) {
    String cursor = positions.vectorAt(seq).encode();
    int bytes = writer.tryWrite(Frames.entry(entry, cursor));
    if (bytes < 0) {
      return false;
    }
    sizer.seen(bytes);
    positions.pushed(seq);
    window.pushed(seq, messageId, cursor);
    gateway.pushed(conn, seq, messageId, 1);
    return true;
  }

  /**
   * A group entry, if its frame fits (false, nothing changed, if not): no Delivery (the ACK wheel counts inbox
   * seqs); the device's ACK commits the group position.
   */
  boolean group(String group, long seq, JsonNode entry) {
    Long before = positions.pushedGroup(group, seq);
    int bytes = writer.tryWrite(Frames.entry(entry, positions.vector().encode()));
    if (bytes < 0) {
      positions.undoGroup(group, before);
      return false;
    }
    sizer.seen(bytes);
    window.pushedGroup(group, seq);
    gateway.pushed(conn, -1, null, 0);
    return true;
  }

  /**
   * Pushes again the unACKed entries of a retry: read again from the store (the window keeps their cursors, not
   * their frames), each with the cursor it first went out with.
   */
  void redeliver(TreeMap<Long, DeliveryWindow.Pushed> again, int attempt) {
    if (again.isEmpty()) {
      return;
    }
    long first = again.firstKey();
    // Inbox seqs are partition offsets: the user's entries between the first and last are at most that many. The
    // read is sized to the write budget like a backlog page; what it leaves out, the next retry brings.
    int span = (int) Math.min(sizer.limit(writer.free()), again.lastKey() - first + 1);
    gateway.api().get(Frames.inboxPath(conn.user, first, span), conn.principal.token())
        .whenComplete((reply, failure) -> {
          if (failure != null || reply.status() != 200) {
            return; // the next retry AckTimeout tries again
          }
          synchronized (conn) {
            for (JsonNode entry : reply.body().path("entries")) {
              long seq = entry.path("seq").asLong(-1);
              DeliveryWindow.Pushed p = again.get(seq);
              if (conn.isClosed() || p == null || !window.contains(seq)) {
                continue;
              }
              if (writer.tryWrite(Frames.entry(Frames.inboxEntry(entry), p.cursor())) < 0) {
                conn.resync("the device does not read fast enough");
                return;
              }
              gateway.pushed(conn, seq, p.messageId(), attempt);
            }
          }
        });
  }
}
