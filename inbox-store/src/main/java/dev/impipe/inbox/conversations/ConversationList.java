package dev.impipe.inbox.conversations;

import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.inbox.query.StoreView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;

/**
 * One page of a user's conversation list, read from the stores of the user's partition: the user's states (one
 * range of the states store), each placed by its position (pinned first, then the most recent activity, see
 * {@link ConversationKeys#order}), the page taken after the cursor's position, and the badge total over all of them.
 * No stored order index and no stored total, so that an inbox entry costs one state write (ADR 0012); with the
 * partition's in-memory order ({@link ConversationOrderCache}, which also keeps the badge) a request reads the states
 * on its page only, without it one of each of the user's conversations (no timeline, no inbox either way).
 */
public final class ConversationList {

  /**
   * One conversation on a page.
   *
   * @param unreadCapped its count hit a cap: more unread than the index tracks ({@code
   *     IM_CONVERSATION_UNREAD_TRACKED}: a recall of an older one no longer lowers it) or, for a large group, more
   *     than {@code IM_CONVERSATION_LARGE_UNREAD_MAX} on its timeline (the count stops there)
   */
  public record Item(String conversationId, ConversationState state, boolean unreadCapped) {

    /** A conversation counted from its own state only: capped when some unread are untracked. */
    public Item(String conversationId, ConversationState state) {
      this(conversationId, state, state.untracked() > 0);
    }
  }

  /**
   * A page.
   *
   * @param unreadTotal unread of all the user's conversations that are not muted
   * @param unreadTotalCapped a count in the total hit a cap: any conversation of the user that is not muted (its
   *     index's) or any large group's timeline count
   * @param next the cursor of the next page, null on the last
   */
  public record ListPage(List<Item> conversations, long unreadTotal, boolean unreadTotalCapped, String next) {}

  private ConversationList() {}

  /**
   * The page after {@code after} (a cursor an earlier page returned; empty: the first page), without large groups'
   * timelines (see the other overload).
   *
   * @throws IllegalArgumentException when {@code after} is not such a cursor
   */
  public static ListPage page(StoreView<byte[]> states, String user, Optional<String> after, int limit) {
    return page(states, null, null, user, after, limit);
  }

  /**
   * The page, with the user's large groups counted from their timelines: {@code largeGroups} is the user's
   * read-diffused intervals per group (the {@code large-groups} store), {@code timelines} reads a group's summary.
   * Every large group of the user adds to {@code unreadTotal} (one timeline read each), not only those on the page.
   * Their messages bring no inbox entry, so a large group is placed by the newer of its own activity and its
   * timeline's last message (pinned first still); the cursor is the position of the page's last conversation either
   * way.
   */
  public static ListPage page(StoreView<byte[]> states, StoreView<byte[]> largeGroups,
      LargeGroupCounts.Source timelines, String user, Optional<String> after, int limit) {
    return page(states, largeGroups, timelines, null, user, after, limit);
  }

  /**
   * The page, its order taken from {@code orders} (the user's partition's in-memory order, null: none): the
   * positions after the cursor, then a read of the states on the page only. The first request of a user builds the
   * order from one read of all their states; while another request builds it, and without {@code orders}, the page
   * reads all the user's states and sorts them. Same pages, cursors and order either way.
   */
  public static ListPage page(StoreView<byte[]> states, StoreView<byte[]> largeGroups,
      LargeGroupCounts.Source timelines, ConversationOrderCache orders, String user, Optional<String> after,
      int limit) {
    Bytes from = after.isPresent() ? ConversationKeys.orderAfter(user, after.get()) : ConversationKeys.orderFrom(user);
    long total = 0;
    boolean capped = false;
    // The user's large groups, placed by their timelines.
    Map<String, Placed> large = new HashMap<>();
    if (largeGroups != null) {
      for (KeyValue<Bytes, byte[]> g : largeGroups.range(StoreKeys.userGroupsFrom(user),
          StoreKeys.userGroupsTo(user), false, Integer.MAX_VALUE)) {
        String group = StoreKeys.userGroupId(g.key);
        Optional<ConversationState> own = state(states, user, group);
        ConversationState s = own.orElse(ConversationState.empty());
        LargeGroupCounts.Summary summary = timelines.fetch(group, user,
            ReadIntervals.parseRanges(ReadIntervals.decode(g.value).ranges()), s.readUpToSeq());
        total += s.muted() ? 0 : summary.unread();
        capped |= !s.muted() && (summary.capped() || s.untracked() > 0);
        // Listed only once the user's own state has it (as any conversation).
        large.put(group, own.map(o -> placed(user, group, o, summary)).orElse(null));
      }
    }
    Listed all = orders == null ? null : fromOrder(states, orders, user, from, limit + 1, large);
    if (all == null) {
      all = fromAll(states, user, from, large);
    }
    total += all.totals().unread();
    capped |= all.totals().capped() > 0;
    List<Placed> listed = all.placed();
    List<Item> items = new ArrayList<>(Math.min(limit, listed.size()));
    for (int i = 0; i < listed.size() && i < limit; i++) {
      Item item = item(states, user, listed.get(i));
      if (item != null) {
        items.add(item);
        capped |= item.unreadCapped() && !item.state().muted();
      }
    }
    String next = listed.size() > limit ? ConversationKeys.cursor(listed.get(limit - 1).key()) : null;
    return new ListPage(items, total, capped, next);
  }

  /** The conversations of a page (or more), in list order, and the badge over all of the user's. */
  private record Listed(List<Placed> placed, ConversationTotals totals) {}

  /**
   * Every conversation of the user at its position (read from the stored bytes; only the page is decoded), those at
   * or after {@code from}, in list order; the badge summed over all.
   */
  private static Listed fromAll(StoreView<byte[]> states, String user, Bytes from, Map<String, Placed> large) {
    List<Placed> listed = new ArrayList<>();
    long unread = 0;
    long capped = 0;
    for (KeyValue<Bytes, byte[]> kv : states.range(ConversationKeys.statesFrom(user), ConversationKeys.statesTo(user),
        false, Integer.MAX_VALUE)) {
      String conversation = ConversationKeys.stateConversation(kv.key);
      unread += ConversationState.storedBadge(kv.value);
      capped += ConversationState.storedCappedInBadge(kv.value) ? 1 : 0;
      Placed pl = large.containsKey(conversation) ? large.get(conversation)
          : new Placed(position(user, conversation, kv.value), null, conversation, kv.value);
      if (pl != null && pl.key().compareTo(from) >= 0) {
        listed.add(pl);
      }
    }
    listed.sort(Comparator.comparing(Placed::key));
    return new Listed(listed, new ConversationTotals(unread, capped));
  }

  /**
   * At most {@code max} conversations at or after {@code from}, in list order, from the user's kept order (built
   * here from one read of their states when not kept yet); large groups placed by their timelines instead of their
   * kept position; the badge from the order. Null when another request is still building the order.
   */
  private static Listed fromOrder(StoreView<byte[]> states, ConversationOrderCache orders, String user,
      Bytes from, int max, Map<String, Placed> large) {
    ConversationOrderCache.Use use = orders.use(user);
    ConversationOrder order = use.order();
    if (use.build()) {
      try {
        List<ConversationOrder.Position> scanned = new ArrayList<>();
        for (KeyValue<Bytes, byte[]> kv : states.range(ConversationKeys.statesFrom(user),
            ConversationKeys.statesTo(user), false, Integer.MAX_VALUE)) {
          String conversation = ConversationKeys.stateConversation(kv.key);
          scanned.add(new ConversationOrder.Position(position(user, conversation, kv.value), conversation,
              ConversationState.storedBadge(kv.value), ConversationState.storedCappedInBadge(kv.value)));
        }
        order.load(scanned);
      } catch (RuntimeException e) {
        orders.drop(user, order); // not servable now: the next request builds it again
        throw e;
      }
    } else if (!order.ready()) {
      return null;
    }
    List<Placed> listed = new ArrayList<>();
    for (ConversationOrder.Position p : order.from(from, max, large::containsKey)) {
      listed.add(new Placed(p.key(), null, p.conversation(), null));
    }
    for (Placed pl : large.values()) {
      if (pl != null && pl.key().compareTo(from) >= 0) {
        listed.add(pl);
      }
    }
    listed.sort(Comparator.comparing(Placed::key));
    return new Listed(listed.size() > max ? listed.subList(0, max) : listed, order.totals());
  }

  /** The page's item of a placed conversation: its merged item, its stored state, or (from the order) a read. */
  private static Item item(StoreView<byte[]> states, String user, Placed pl) {
    if (pl.item() != null) {
      return pl.item();
    }
    if (pl.stored() != null) {
      return new Item(pl.conversation(), ConversationState.decode(pl.stored()));
    }
    return state(states, user, pl.conversation()).map(s -> new Item(pl.conversation(), s)).orElse(null);
  }

  private static Bytes position(String user, String conversation, byte[] stored) {
    return ConversationKeys.order(user, ConversationState.storedPinned(stored), ConversationState.storedActivityAt(
        stored), conversation);
  }

  /** A conversation at its position in the list: an item (a large group's, merged) or its stored state. */
  private record Placed(Bytes key, Item item, String conversation, byte[] stored) {}

  /** A large group as listed: the member's state with the timeline's, placed by the newer activity of the two. */
  private static Placed placed(String user, String group, ConversationState own, LargeGroupCounts.Summary summary) {
    long activity = summary.last() == null ? own.activityAt()
        : Math.max(own.activityAt(), summary.last().timestamp());
    return new Placed(ConversationKeys.order(user, own.pinned(), activity, group),
        new Item(group, LargeGroupCounts.merge(own, summary), summary.capped() || own.untracked() > 0), group,
        null);
  }

  private static Optional<ConversationState> state(StoreView<byte[]> states, String user, String conversation) {
    return states.get(ConversationKeys.state(user, conversation)).map(ConversationState::decode);
  }
}
