package dev.impipe.push;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The entries one connection pushed and the device has not ACKed yet: per inbox seq what a redelivery needs (the
 * message id for its Delivery and the cursor the frame carried; the entry itself is read again from the store), and
 * per large group the timeline seqs. Never the frames: a device that does not ACK holds a few dozen bytes per entry
 * here, not the entries. Not thread-safe (the connection's lock guards it).
 */
final class DeliveryWindow {

  /** An inbox entry pushed and not ACKed: what its redelivery needs besides the entry. */
  record Pushed(String messageId, String cursor) {}

  private final TreeMap<Long, Pushed> inbox = new TreeMap<>();
  private final Map<String, ArrayDeque<Long>> groups = new HashMap<>();
  private int groupCount;

  void pushed(long seq, String messageId, String cursor) {
    inbox.put(seq, new Pushed(messageId, cursor));
  }

  void pushedGroup(String group, long seq) {
    groups.computeIfAbsent(group, g -> new ArrayDeque<>()).add(seq);
    groupCount++;
  }

  /** Cumulative ACK of the inbox up to {@code seq}. */
  void ackInbox(long seq) {
    inbox.headMap(seq, true).clear();
  }

  /** Cumulative ACK of group {@code group}'s timeline up to {@code seq}. */
  void ackGroup(String group, long seq) {
    ArrayDeque<Long> unacked = groups.get(group);
    while (unacked != null && !unacked.isEmpty() && unacked.peekFirst() <= seq) {
      unacked.pollFirst();
      groupCount--;
    }
    if (unacked != null && unacked.isEmpty()) {
      groups.remove(group);
    }
  }

  /** Entries pushed and not ACKed, inbox and groups. */
  int size() {
    return inbox.size() + groupCount;
  }

  boolean contains(long seq) {
    return inbox.containsKey(seq);
  }

  /** The still unACKed inbox entries among {@code seqs}, ascending. */
  TreeMap<Long, Pushed> unacked(List<Long> seqs) {
    TreeMap<Long, Pushed> out = new TreeMap<>();
    for (Long seq : seqs) {
      Pushed p = inbox.get(seq);
      if (p != null) {
        out.put(seq, p);
      }
    }
    return out;
  }

  void clear() {
    inbox.clear();
    groups.clear();
    groupCount = 0;
  }
}
