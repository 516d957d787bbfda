package dev.impipe.inbox.query;

import dev.impipe.runtime.streams.VersionedValue;
import java.util.ArrayList;
import java.util.List;

/**
 * The read-diffused intervals of one user in one large group: the conversation seqs whose messages the user reads
 * from the group timeline ({@code #groupId}) instead of their own inbox. Built from the user's
 * CONVERSATION_JOINED / LEFT / MODE entries of the group, oldest first, never overlapping.
 *
 * <p>Encoding ({@link VersionedValue}): {@code [version 1] int32 count}, then per interval {@code from, to, openedAt,
 * closedAt, closedTime} as int64 ({@code to} and {@code closedAt} are {@link Long#MAX_VALUE} while the interval is
 * open).
 */
public record ReadIntervals(List<Interval> intervals) {

  public static final ReadIntervals NONE = new ReadIntervals(List.of());

  private static final int VERSION = 1;

  /**
   * Conversation seqs {@code [from, to)} read from the group timeline.
   *
   * @param openedAt inbox seq of the JOINED / MODE entry that opened it
   * @param closedAt inbox seq of the LEFT / MODE / JOINED entry that closed it, {@link Long#MAX_VALUE} while open
   * @param closedTime record timestamp of that entry (for pruning), {@link Long#MAX_VALUE} while open
   */
  public record Interval(long from, long to, long openedAt, long closedAt, long closedTime) {

    public boolean open() {
      return to == Long.MAX_VALUE;
    }

    public boolean contains(long conversationSeq) {
      return conversationSeq >= from && conversationSeq < to;
    }
  }

  public ReadIntervals {
    intervals = List.copyOf(intervals);
  }

  public static ReadIntervals decode(byte[] bytes) {
    if (bytes == null || bytes.length == 0) {
      return NONE;
    }
    VersionedValue.Reader r = VersionedValue.read(bytes, "large-groups", VERSION);
    int count = r.int32();
    if (count < 0) {
      throw new VersionedValue.MalformedValueException("large-groups value with " + count + " intervals");
    }
    List<Interval> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      out.add(new Interval(r.int64(), r.int64(), r.int64(), r.int64(), r.int64()));
    }
    r.end();
    return new ReadIntervals(out);
  }

  public byte[] encode() {
    VersionedValue.Writer w = VersionedValue.write(VERSION).int32(intervals.size());
    for (Interval i : intervals) {
      w.int64(i.from()).int64(i.to()).int64(i.openedAt()).int64(i.closedAt()).int64(i.closedTime());
    }
    return w.build();
  }

  public boolean isEmpty() {
    return intervals.isEmpty();
  }

  /** The open interval, if any (always the last one). */
  public Interval openInterval() {
    return intervals.isEmpty() || !intervals.get(intervals.size() - 1).open() ? null
        : intervals.get(intervals.size() - 1);
  }

  /**
   * Applies a JOINED / LEFT / MODE event of the group at inbox seq {@code inboxSeq}: any open interval ends at
   * {@code fromSeq}; when {@code readDiffusion}, a new one opens there. Empty intervals (a join and a leave with no
   * message in between) are dropped.
   */
  public ReadIntervals apply(long fromSeq, boolean readDiffusion, long inboxSeq, long timestamp) {
    List<Interval> out = new ArrayList<>(intervals);
    Interval open = openInterval();
    if (open != null) {
      out.remove(out.size() - 1);
      if (fromSeq > open.from()) {
        out.add(new Interval(open.from(), fromSeq, open.openedAt(), inboxSeq, timestamp));
      }
    }
    if (readDiffusion) {
      out.add(new Interval(fromSeq, Long.MAX_VALUE, inboxSeq, Long.MAX_VALUE, Long.MAX_VALUE));
    }
    return new ReadIntervals(out);
  }

  /** Without the closed intervals that ended before {@code cutoff} (their group entries have expired too). */
  public ReadIntervals closedBefore(long cutoff) {
    return new ReadIntervals(intervals.stream().filter(i -> i.open() || i.closedTime() >= cutoff).toList());
  }

  /** Index of the interval holding {@code conversationSeq}, -1 when none does. */
  public int indexOf(long conversationSeq) {
    for (int i = 0; i < intervals.size(); i++) {
      if (intervals.get(i).contains(conversationSeq)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * The inbox seq of the newest JOINED / LEFT / MODE entry these intervals reflect (the last opening or closing one),
   * -1 when none: an entry of the group at a higher inbox seq is not applied yet.
   */
  public long through() {
    long through = -1;
    for (Interval i : intervals) {
      through = Math.max(through, i.openedAt());
      if (!i.open()) {
        through = Math.max(through, i.closedAt());
      }
    }
    return through;
  }

  /** Compact text form {@code from-to,from-to} ({@code to} of an open interval is omitted), for the timeline query. */
  public String ranges() {
    StringBuilder sb = new StringBuilder();
    for (Interval i : intervals) {
      if (sb.length() > 0) {
        sb.append(',');
      }
      sb.append(i.from()).append('-');
      if (!i.open()) {
        sb.append(i.to());
      }
    }
    return sb.toString();
  }

  /** Parses {@link #ranges()} into {@code [from, to)} pairs; {@link IllegalArgumentException} when malformed. */
  public static List<long[]> parseRanges(String text) {
    if (text == null || text.isEmpty()) {
      return List.of();
    }
    List<long[]> out = new ArrayList<>();
    long previousTo = Long.MIN_VALUE;
    for (String part : text.split(",", -1)) {
      int dash = part.indexOf('-');
      if (dash == -1) { // a dash first ("-5") leaves an empty from, refused below
        throw new IllegalArgumentException("range '" + part + "' is not from-to");
      }
      long from;
      long to;
      try {
        from = Long.parseLong(part.substring(0, dash));
        to = dash == part.length() - 1 ? Long.MAX_VALUE : Long.parseLong(part.substring(dash + 1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("range '" + part + "' is not from-to");
      }
      if (from < 0 || to <= from || from < previousTo) {
        throw new IllegalArgumentException("ranges must be ascending, non-empty and not overlap: '" + text + "'");
      }
      previousTo = to;
      out.add(new long[] {from, to});
    }
    return out;
  }
}
