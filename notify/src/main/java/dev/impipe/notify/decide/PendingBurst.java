package dev.impipe.notify.decide;

import dev.impipe.runtime.streams.VersionedValue;
import java.util.ArrayList;
import java.util.List;

/**
 * The messages of one conversation that one registered device has not received and has not been notified about
 * yet, and when it was last notified about the conversation: what a notification will cover, and when it is due. Pure
 * and immutable; every change returns a new burst.
 *
 * <p>At most {@code tracked} messages are kept one by one (newest), older ones only counted ({@link Untracked}): they
 * still count in the notification, a device's receipt or a read marker past the newest of them clears them all, but a
 * recall of one no longer lowers the count (as the conversation list's unread index does).
 *
 * @param messages the tracked messages, oldest first (ascending inbox seq)
 * @param untracked the messages counted beyond the tracked ones (all older than them)
 * @param preview the preview of the newest message, or null (previews off, or the newest was recalled)
 * @param lastNotifiedAt when the device was last notified about the conversation, {@link #NONE} if not within the
 *     coalescing window
 * @param due the time of this burst's entry in the due index, {@link #NONE} when it has none
 */
public record PendingBurst(List<Message> messages, Untracked untracked, String preview, long lastNotifiedAt,
    long due) {

  /** No time (no notification yet, no due entry). */
  public static final long NONE = Long.MIN_VALUE;

  private static final int VERSION = 1;

  /** One message not received yet. */
  public record Message(long seq, long conversationSeq, String messageId, String senderId, long entryAt) {}

  /**
   * Messages counted but no longer tracked one by one.
   *
   * @param count how many
   * @param firstSeq inbox seq of the oldest (-1 when none)
   * @param firstAt entry time of the oldest
   * @param maxSeq the highest inbox seq among them
   * @param maxConversationSeq the highest conversation seq among them
   */
  public record Untracked(long count, long firstSeq, long firstAt, long maxSeq, long maxConversationSeq) {
    public static final Untracked NONE = new Untracked(0, -1, -1, -1, -1);

    Untracked plus(Message m) {
      return count == 0 ? new Untracked(1, m.seq(), m.entryAt(), m.seq(), m.conversationSeq())
          : new Untracked(count + 1, firstSeq, firstAt, Math.max(maxSeq, m.seq()),
              Math.max(maxConversationSeq, m.conversationSeq()));
    }
  }

  public PendingBurst {
    messages = List.copyOf(messages);
  }

  /** Nothing pending, never notified. */
  public static PendingBurst empty() {
    return new PendingBurst(List.of(), Untracked.NONE, null, NONE, NONE);
  }

  /** Messages the burst covers. */
  public long count() {
    return messages.size() + untracked.count();
  }

  public boolean isEmpty() {
    return count() == 0;
  }

  /** Inbox seq of the oldest covered message (the notification's id names it). */
  public long firstSeq() {
    return untracked.count() > 0 ? untracked.firstSeq() : messages.get(0).seq();
  }

  /** Entry time of the oldest covered message. */
  public long firstEntryAt() {
    return untracked.count() > 0 ? untracked.firstAt() : messages.get(0).entryAt();
  }

  /** Inbox seq of the newest covered message. */
  public long newestSeq() {
    return messages.isEmpty() ? untracked.maxSeq() : messages.get(messages.size() - 1).seq();
  }

  /** Sender of the newest tracked message, or null. */
  public String senderId() {
    return messages.isEmpty() ? null : messages.get(messages.size() - 1).senderId();
  }

  /**
   * With {@code m} added as the newest message (its preview {@code newPreview}), keeping at most {@code tracked} one
   * by one. A message at or below a seq already covered is a replay: nothing changes.
   */
  public PendingBurst add(Message m, String newPreview, int tracked) {
    if (m.seq() <= newestSeq()) {
      return this;
    }
    List<Message> next = new ArrayList<>(messages.size() + 1);
    next.addAll(messages);
    next.add(m);
    Untracked beyond = untracked;
    while (next.size() > Math.max(1, tracked)) {
      beyond = beyond.plus(next.remove(0));
    }
    return new PendingBurst(next, beyond, newPreview, lastNotifiedAt, due);
  }

  /** Without the messages the device has received: those at or below inbox seq {@code received}. */
  public PendingBurst receivedUpTo(long received) {
    List<Message> kept = messages.stream().filter(m -> m.seq() > received).toList();
    Untracked beyond = untracked.maxSeq() <= received ? Untracked.NONE : untracked;
    return without(kept, beyond);
  }

  /** Without the messages read on any device: those at or below conversation seq {@code readUpTo}. */
  public PendingBurst readUpTo(long readUpTo) {
    List<Message> kept = messages.stream().filter(m -> m.conversationSeq() > readUpTo).toList();
    Untracked beyond = untracked.maxConversationSeq() <= readUpTo ? Untracked.NONE : untracked;
    return without(kept, beyond);
  }

  /** Without the recalled message {@code messageId} (if tracked). */
  public PendingBurst recalled(String messageId) {
    return without(messages.stream().filter(m -> !messageId.equals(m.messageId())).toList(), untracked);
  }

  /** After a notification at {@code now}: nothing pending, the coalescing window starts. */
  public PendingBurst notified(long now) {
    return new PendingBurst(List.of(), Untracked.NONE, null, now, due);
  }

  /** Nothing pending any more (muted), the coalescing window kept. */
  public PendingBurst cleared() {
    return new PendingBurst(List.of(), Untracked.NONE, null, lastNotifiedAt, due);
  }

  public PendingBurst withDue(long newDue) {
    return new PendingBurst(messages, untracked, preview, lastNotifiedAt, newDue);
  }

  /**
   * When this burst's due entry should be: with messages, {@code after} past the oldest one's entry and
   * {@code coalesce} past the last notification; without, the end of the coalescing window (when the burst is
   * removed); {@link #NONE} when there is nothing to keep (no messages, and no window open at {@code now}).
   */
  public long nextDue(long afterMs, long coalesceMs, long now) {
    long windowEnd = lastNotifiedAt == NONE ? NONE : lastNotifiedAt + coalesceMs;
    if (!isEmpty()) {
      return Math.max(firstEntryAt() + afterMs, windowEnd);
    }
    return windowEnd > now ? windowEnd : NONE;
  }

  private PendingBurst without(List<Message> kept, Untracked beyond) {
    if (kept.size() == messages.size() && beyond.equals(untracked)) {
      return this;
    }
    boolean newestGone = !messages.isEmpty()
        && (kept.isEmpty() || kept.get(kept.size() - 1) != messages.get(messages.size() - 1));
    // A newer message's preview is never shown for an older one: without the newest, no preview.
    return new PendingBurst(kept, beyond, newestGone ? null : preview, lastNotifiedAt, due);
  }

  /**
   * The stored form: {@code [version 1] int64 due, int64 lastNotifiedAt, string preview, int64 untracked count,
   * int64 firstSeq, int64 firstAt, int64 maxSeq, int64 maxConversationSeq, int32 n, n x (int64 seq, int64
   * conversationSeq, int64 entryAt, string messageId, string senderId)}.
   */
  public byte[] encode() {
    VersionedValue.Writer w = VersionedValue.write(VERSION).int64(due).int64(lastNotifiedAt).string(preview)
        .int64(untracked.count()).int64(untracked.firstSeq()).int64(untracked.firstAt()).int64(untracked.maxSeq())
        .int64(untracked.maxConversationSeq()).int32(messages.size());
    for (Message m : messages) {
      w.int64(m.seq()).int64(m.conversationSeq()).int64(m.entryAt()).string(m.messageId()).string(m.senderId());
    }
    return w.build();
  }

  /** Reads what {@link #encode()} wrote; a {@code SerializationException} when the bytes are not one. */
  public static PendingBurst decode(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, NotifyTopology.PENDING_STORE, VERSION);
    long due = r.int64();
    long lastNotifiedAt = r.int64();
    String preview = r.string();
    Untracked untracked = new Untracked(r.int64(), r.int64(), r.int64(), r.int64(), r.int64());
    int n = r.int32();
    if (n < 0) {
      throw new VersionedValue.MalformedValueException(NotifyTopology.PENDING_STORE + " value: " + n + " messages");
    }
    // A count the bytes cannot hold fails on the first field past the end, not on an allocation of its size.
    List<Message> messages = new ArrayList<>(Math.min(n, 64));
    for (int i = 0; i < n; i++) {
      long seq = r.int64();
      long conversationSeq = r.int64();
      long entryAt = r.int64();
      messages.add(new Message(seq, conversationSeq, r.string(), r.string(), entryAt));
    }
    r.end();
    return new PendingBurst(messages, untracked, preview, lastNotifiedAt, due);
  }
}
