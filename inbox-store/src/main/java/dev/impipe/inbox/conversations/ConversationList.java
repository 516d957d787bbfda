package dev.impipe.inbox.conversations;

import dev.impipe.inbox.query.StoreView;
import java.util.ArrayList;
import java.util.List;
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
   * The page after {@code after} (a cursor an earlier page returned; empty: the first page).
   *
   * @throws IllegalArgumentException when {@code after} is not such a cursor
   */
  public static ListPage page(StoreView<byte[]> order, StoreView<byte[]> states, StoreView<Long> totals, String user,
      Optional<String> after, int limit) {
    Bytes from = after.isPresent() ? ConversationKeys.orderAfter(user, after.get()) : ConversationKeys.orderFrom(user);
    List<KeyValue<Bytes, byte[]>> keys = order.range(from, ConversationKeys.orderTo(user), false, limit + 1);
    List<Item> items = new ArrayList<>(Math.min(limit, keys.size()));
    for (int i = 0; i < keys.size() && i < limit; i++) {
      String conversation = ConversationKeys.orderConversation(keys.get(i).key);
      Optional<byte[]> state = states.get(ConversationKeys.state(user, conversation));
      // Both are written in one transaction by one processor; an order key without state is never left behind.
      state.ifPresent(s -> items.add(new Item(conversation, ConversationState.decode(s))));
    }
    String next = keys.size() > limit ? ConversationKeys.cursor(keys.get(limit - 1).key) : null;
    long total = totals.get(ConversationKeys.total(user)).orElse(0L);
    return new ListPage(items, total, next);
  }
}
