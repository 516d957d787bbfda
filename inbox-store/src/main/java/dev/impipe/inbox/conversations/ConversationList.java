package dev.impipe.inbox.conversations;

import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.inbox.query.StoreView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * One page of a user's conversation list, read from the stores of the user's partition: an ordered range of the
 * order index (pinned first, then the most recent activity), a state read per conversation on the page, and the
 * badge total. Work per request: the page, never the whole list or a timeline.
 */
public final class ConversationList {

  /** One conversation on a page. */
  public record Item(String conversationId, ConversationState state) {}

  /**
   * A page.
   *
   * @param unreadTotal unread of all the user's conversations that are not muted
   * @param next the cursor of the next page, null on the last
   */
  public record ListPage(List<Item> conversations, long unreadTotal, String next) {}

  private ConversationList() {}

  /**
   * The page after {@code after} (a cursor an earlier page returned; empty: the first page), without large groups'
   * timelines (see the other overload).
   *
   * @throws IllegalArgumentException when {@code after} is not such a cursor
   */
  public static ListPage page(StoreView<byte[]> order, StoreView<byte[]> states, StoreView<Long> totals, String user,
      Optional<String> after, int limit) {
    return page(order, states, totals, null, null, user, after, limit);
  }

  /**
   * The page, with the user's large groups counted from their timelines: {@code largeGroups} is the user's
   * read-diffused intervals per group (the {@code large-groups} store), {@code timelines} reads a group's summary.
   * Every large group of the user adds to {@code unreadTotal} (one timeline read each), not only those on the page.
   */
  public static ListPage page(StoreView<byte[]> order, StoreView<byte[]> states, StoreView<Long> totals,
      StoreView<byte[]> largeGroups, LargeGroupCounts.Source timelines, String user, Optional<String> after,
      int limit) {
    Bytes from = after.isPresent() ? ConversationKeys.orderAfter(user, after.get()) : ConversationKeys.orderFrom(user);
    List<KeyValue<Bytes, byte[]>> keys = order.range(from, ConversationKeys.orderTo(user), false, limit + 1);
    Map<String, LargeGroupCounts.Summary> summaries = new HashMap<>();
    long total = totals.get(ConversationKeys.total(user)).orElse(0L);
    if (largeGroups != null) {
      for (KeyValue<Bytes, byte[]> g : largeGroups.range(StoreKeys.userGroupsFrom(user),
          StoreKeys.userGroupsTo(user), false, Integer.MAX_VALUE)) {
        String group = StoreKeys.userGroupId(g.key);
        ConversationState s = state(states, user, group).orElse(ConversationState.empty());
        LargeGroupCounts.Summary summary = timelines.fetch(group, user,
            ReadIntervals.parseRanges(ReadIntervals.decode(g.value).ranges()), s.readUpToSeq());
        summaries.put(group, summary);
        total += s.muted() ? 0 : summary.unread();
      }
    }
    List<Item> items = new ArrayList<>(Math.min(limit, keys.size()));
    for (int i = 0; i < keys.size() && i < limit; i++) {
      String conversation = ConversationKeys.orderConversation(keys.get(i).key);
      // Both are written in one transaction by one processor; an order key without state is never left behind.
      state(states, user, conversation).ifPresent(s -> {
        LargeGroupCounts.Summary summary = summaries.get(conversation);
        items.add(new Item(conversation, summary == null ? s : LargeGroupCounts.merge(s, summary)));
      });
    }
    String next = keys.size() > limit ? ConversationKeys.cursor(keys.get(limit - 1).key) : null;
    return new ListPage(items, total, next);
  }

  private static Optional<ConversationState> state(StoreView<byte[]> states, String user, String conversation) {
    return states.get(ConversationKeys.state(user, conversation)).map(ConversationState::decode);
  }
}
