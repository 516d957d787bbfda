package dev.impipe.inbox.query;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.internal.StoreKeys;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * One device sync page merged from the user's inbox and the timelines of the user's large groups.
 *
 * <p>Order: among the sources' next entries, the one with the oldest timestamp goes first (ties: inbox first,
 * then groups by id), under two constraints that keep each conversation in order across mode switches, joins and
 * leaves: a group entry of a read-diffused interval never goes before the inbox entry that opened the interval
 * (JOINED / MODE), and an inbox entry never goes before the group entries of an interval that it, or an earlier
 * entry, closed (LEFT / MODE). A group's messages are in its timeline exactly for the conversation seqs inside
 * the user's intervals and in the user's inbox exactly outside them, so each message comes once. The constraints
 * can always be met (an interval's opener precedes its closer), so a page is never empty while something is
 * pending; {@code limit} bounds the page across all sources.
 */
public final class MergedSync {

  /** Reads a group's timeline: entries after {@code after} inside {@code intervals}, ascending, at most limit. */
  @FunctionalInterface
  public interface GroupSource {
    Page<InboxEntry> fetch(String groupId, long after, ReadIntervals intervals, int limit);
  }

  /** A large group of the user, with the device's position in its timeline (-1: none committed yet). */
  public record Group(String groupId, ReadIntervals intervals, long position) {}

  /**
   * One entry of the merged page.
   *
   * @param groupId null for an entry of the user's inbox, else the large group whose timeline it comes from
   * @param seq seq in its source (the inbox, or the group timeline)
   */
  public record Entry(String groupId, long seq, InboxEntry value) {}

  /**
   * A merged page: entries, the inbox position after it ({@code next}), more pending, the cursor vector, and the
   * user's large groups as read for it (their intervals; read before the inbox page, so every membership entry the
   * intervals reflect is at or before the page's inbox entries).
   */
  public record SyncPage(List<Entry> entries, long next, boolean hasMore, SyncCursor cursor, List<Group> groups) {
    public SyncPage {
      entries = List.copyOf(entries);
      groups = List.copyOf(groups);
    }
  }

  private MergedSync() {}

  /**
   * The sync page of {@code device} of {@code user}, from the stores of the user's partition ({@code inbox},
   * {@code cursors}, {@code largeGroups}) and the group timelines wherever they live ({@code source}).
   */
  public static SyncPage sync(StoreView<InboxEntry> inbox, StoreView<Long> cursors, StoreView<byte[]> largeGroups,
      String user, String device, int limit, GroupSource source) {
    return sync(inbox, cursors, largeGroups, user, device, null, limit, source);
  }

  /**
   * Like {@link #sync(StoreView, StoreView, StoreView, String, String, int, GroupSource)}, but after the position
   * {@code after} instead of the device's committed cursor when it is given (a group it does not name: from the
   * start of the user's intervals). The push gateway reads a device's backlog page after page like this, from what
   * it has pushed, without committing anything in between.
   */
  public static SyncPage sync(StoreView<InboxEntry> inbox, StoreView<Long> cursors, StoreView<byte[]> largeGroups,
      String user, String device, SyncCursor after, int limit, GroupSource source) {
    Plan plan = plan(inbox, cursors, largeGroups, user, device, after, limit);
    return merge(plan, fetchAll(plan.timelinesToRead(), source, limit), limit, Long.MAX_VALUE);
  }

  /**
   * What a sync page reads from the user's own partition, before any group timeline: the user's large groups with
   * the device's positions (read first, see {@link SyncPage}) and the inbox page after the device's position.
   *
   * @param inboxCursor the inbox seq the page starts after
   */
  public record Plan(String user, Page<InboxEntry> inbox, long inboxCursor, List<Group> groups) {
    public Plan {
      groups = List.copyOf(groups);
    }

    /** The groups whose timelines the page merges: those the user has read intervals in. */
    public List<Group> timelinesToRead() {
      return groups.stream().filter(g -> !g.intervals().isEmpty()).toList();
    }
  }

  /** Reads the {@link Plan} of a sync page from the stores of the user's partition (no group timeline read). */
  public static Plan plan(StoreView<InboxEntry> inbox, StoreView<Long> cursors, StoreView<byte[]> largeGroups,
      String user, String device, SyncCursor after, int limit) {
    return plan(inbox, cursors, largeGroups, user, device, after, limit, Long.MAX_VALUE);
  }

  /** The same, reading at most {@code maxBytes} of inbox entries ({@link JsonSize#entry}, at least one). */
  public static Plan plan(StoreView<InboxEntry> inbox, StoreView<Long> cursors, StoreView<byte[]> largeGroups,
      String user, String device, SyncCursor after, int limit, long maxBytes) {
    long cursor = after != null ? after.inbox() : Timelines.cursor(cursors, user, device);
    List<Group> groups = new ArrayList<>();
    for (KeyValue<Bytes, byte[]> kv : largeGroups.range(StoreKeys.userGroupsFrom(user),
        StoreKeys.userGroupsTo(user), false, Integer.MAX_VALUE)) {
      String group = StoreKeys.userGroupId(kv.key);
      long position = after != null ? after.groups().getOrDefault(group, -1L)
          : Timelines.groupPosition(cursors, user, device, group);
      groups.add(new Group(group, ReadIntervals.decode(kv.value), position));
    }
    return new Plan(user, Timelines.after(inbox, user, cursor, limit, JsonSize::entry, maxBytes), cursor, groups);
  }

  /**
   * Merges {@code inbox} (the user's inbox after the device's inbox seq {@code inboxCursor}, read with the same
   * {@code limit}) with the device's large groups.
   */
  public static SyncPage merge(String user, Page<InboxEntry> inbox, long inboxCursor, List<Group> groups,
      GroupSource source, int limit) {
    Plan plan = new Plan(user, inbox, inboxCursor, groups);
    return merge(plan, fetchAll(plan.timelinesToRead(), source, limit), limit, Long.MAX_VALUE);
  }

  private static Map<String, Page<InboxEntry>> fetchAll(List<Group> groups, GroupSource source, int limit) {
    Map<String, Page<InboxEntry>> pages = new LinkedHashMap<>();
    for (Group g : groups) {
      pages.put(g.groupId(), source.fetch(g.groupId(), g.position(), g.intervals(), limit));
    }
    return pages;
  }

  /**
   * Merges the plan's inbox page with the pages of its groups' timelines ({@code timelines}, by group id, one for
   * each of {@link Plan#timelinesToRead()}, each read after the group's position with the same {@code limit}). The
   * page holds at most {@code limit} entries and at most {@code maxBytes} of them ({@link JsonSize#entry}), at
   * least one while something is pending; what is left says {@code hasMore}.
   */
  public static SyncPage merge(Plan plan, Map<String, Page<InboxEntry>> timelines, int limit, long maxBytes) {
    String user = plan.user();
    Page<InboxEntry> inbox = plan.inbox();
    long inboxCursor = plan.inboxCursor();
    List<Group> groups = plan.groups();
    List<Source> sources = new ArrayList<>();
    for (Group g : plan.timelinesToRead()) {
      Page<InboxEntry> page = timelines.get(g.groupId());
      if (page == null) {
        throw new IllegalArgumentException("no timeline page for group " + g.groupId());
      }
      sources.add(new Source(user, g, page));
    }
    List<Page.Entry<InboxEntry>> pending = inbox.entries();
    int nextInbox = 0;
    long inboxPosition = inboxCursor;
    long bytes = 0;
    List<Entry> out = new ArrayList<>();
    while (out.size() < limit) {
      Page.Entry<InboxEntry> head = nextInbox < pending.size() ? pending.get(nextInbox) : null;
      // Every inbox entry below this seq has been emitted (or is not there at all).
      long frontier = head != null ? head.seq()
          : inbox.hasMore() ? (pending.isEmpty() ? inboxCursor : pending.get(pending.size() - 1).seq()) + 1
          : Long.MAX_VALUE;
      Source best = null;
      for (Source s : sources) {
        Page.Entry<InboxEntry> g = s.head();
        if (g != null && s.interval(g).openedAt() < frontier
            && (best == null || g.value().getTimestamp().isBefore(best.head().value().getTimestamp()))) {
          best = s;
        }
      }
      boolean inboxEligible = head != null && sources.stream().noneMatch(s -> s.blocks(head.seq()));
      boolean fromInbox = inboxEligible && (best == null
          || !head.value().getTimestamp().isAfter(best.head().value().getTimestamp()));
      if (!fromInbox && best == null) {
        break; // the rest waits for entries beyond this page
      }
      long size = JsonSize.entry(fromInbox ? head.value() : best.head().value());
      if (!out.isEmpty() && bytes + size > maxBytes) {
        break; // the byte budget is spent: the rest goes on the next page
      }
      bytes += size;
      if (fromInbox) {
        out.add(new Entry(null, head.seq(), head.value()));
        inboxPosition = head.seq();
        nextInbox++;
      } else {
        Page.Entry<InboxEntry> g = best.take();
        out.add(new Entry(best.group.groupId(), g.seq(), g.value()));
      }
    }
    boolean more = nextInbox < pending.size() || inbox.hasMore()
        || sources.stream().anyMatch(s -> s.head() != null || s.page.hasMore());
    Map<String, Long> positions = new LinkedHashMap<>();
    for (Group g : groups) {
      if (g.position() >= 0) {
        positions.put(g.groupId(), g.position());
      }
    }
    sources.forEach(s -> {
      long committable = s.committablePosition();
      if (committable >= 0) {
        positions.put(s.group.groupId(), committable);
      }
    });
    return new SyncPage(out, inboxPosition, more, SyncCursor.of(inboxPosition, positions), groups);
  }

  /** A group timeline being merged. */
  private static final class Source {
    final Group group;
    final Page<InboxEntry> page;
    int next;
    long position;
    final long skippedTail;

    Source(String user, Group group, Page<InboxEntry> page) {
      this.group = group;
      // Only messages inside an interval are shown, whatever the timeline's owner answered. The timeline also
      // holds the group's leaves: they are never shown, but the user's own LEFT ends the read right there, even
      // while the user's inbox (another partition) has not applied it yet and the interval still looks open.
      List<Page.Entry<InboxEntry>> shown = new ArrayList<>();
      boolean hasMore = page.hasMore();
      long skipped = -1;
      for (Page.Entry<InboxEntry> e : page.entries()) {
        if (e.seq() <= group.position()) {
          continue;
        }
        boolean leave = e.value().getType() == InboxEntryType.CONVERSATION_LEFT;
        if (leave && user.equals(e.value().getSenderId())
            && group.intervals().indexOf(e.value().getConversationSeq()) >= 0
            && !leaveApplied(group.intervals(), e.value().getConversationSeq())) {
          hasMore = false;
          break;
        }
        if (leave || group.intervals().indexOf(e.value().getConversationSeq()) < 0) {
          skipped = e.seq();
          continue;
        }
        shown.add(e);
        skipped = -1;
      }
      this.page = new Page<>(shown, page.next(), hasMore);
      this.position = group.position();
      this.skippedTail = skipped;
    }

    /**
     * Whether the user's inbox has applied a LEFT at {@code conversationSeq}: an interval closed there. Then a LEFT
     * marker at that seq inside an interval is not news but the start of a rejoin at the same seq (a leave and a
     * join with no message in between): skipped like other members' leaves, not a stop.
     */
    private static boolean leaveApplied(ReadIntervals intervals, long conversationSeq) {
      return intervals.intervals().stream().anyMatch(i -> !i.open() && i.to() == conversationSeq);
    }

    /**
     * The position to commit: past the entries taken and, once all are taken, past the not-for-this-user entries
     * that followed them, so a run of other members' leaves cannot hold the device's position back forever.
     */
    long committablePosition() {
      return head() == null ? Math.max(position, skippedTail) : position;
    }

    Page.Entry<InboxEntry> head() {
      return next < page.entries().size() ? page.entries().get(next) : null;
    }

    Page.Entry<InboxEntry> take() {
      Page.Entry<InboxEntry> e = page.entries().get(next++);
      position = e.seq();
      return e;
    }

    ReadIntervals.Interval interval(Page.Entry<InboxEntry> e) {
      return group.intervals().intervals().get(group.intervals().indexOf(e.value().getConversationSeq()));
    }

    /** Whether entries of an interval closed at or before inbox seq {@code inboxSeq} may still be pending. */
    boolean blocks(long inboxSeq) {
      Page.Entry<InboxEntry> h = head();
      Page.Entry<InboxEntry> undone = h != null ? h
          : page.hasMore() && !page.entries().isEmpty() ? page.entries().get(page.entries().size() - 1) : null;
      return undone != null && interval(undone).closedAt() <= inboxSeq;
    }
  }
}
