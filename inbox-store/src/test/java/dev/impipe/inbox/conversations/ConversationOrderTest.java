package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

/** One user's in-memory list order: positions, moves, pages after a cursor, and the build over a scan. */
class ConversationOrderTest {

  private static final String USER = "alice";

  @Test
  void aPageIsTheFirstPositionsAfterTheCursorInListOrder() {
    // Given a pinned chat a, then c (activity 30), then b (activity 20)
    ConversationOrder order = loaded(pos("b", false, 20), pos("a", true, 5), pos("c", false, 30));

    // Then the list order is pinned first, then the newest
    assertThat(ids(order.from(ConversationKeys.orderFrom(USER), 10, c -> false))).containsExactly("a", "c", "b");
    // and a page of two after "a" holds c and b; max bounds it
    assertThat(ids(order.from(after(pos("a", true, 5)), 10, c -> false))).containsExactly("c", "b");
    assertThat(ids(order.from(ConversationKeys.orderFrom(USER), 2, c -> false))).containsExactly("a", "c");
  }

  @Test
  void skippedConversationsDoNotCountTowardsThePage() {
    ConversationOrder order = loaded(pos("a", false, 3), pos("b", false, 2), pos("c", false, 1));

    // When b is skipped (a large group, placed by its timeline instead), a page of two holds a and c
    assertThat(ids(order.from(ConversationKeys.orderFrom(USER), 2, "b"::equals))).containsExactly("a", "c");
  }

  @Test
  void aMoveTakesTheConversationFromItsOldPosition() {
    ConversationOrder order = loaded(pos("a", false, 3), pos("b", false, 2));

    // When b gets newer activity, then pinned
    order.move(new ConversationOrder.Position(key("b", false, 10), "b"));
    assertThat(ids(order.from(ConversationKeys.orderFrom(USER), 10, c -> false))).containsExactly("b", "a");
    order.move(new ConversationOrder.Position(key("a", true, 3), "a"));
    order.move(new ConversationOrder.Position(key("a", true, 3), "a")); // a replay: same position

    // Then each is listed once, at its newest position
    assertThat(ids(order.from(ConversationKeys.orderFrom(USER), 10, c -> false))).containsExactly("a", "b");
    assertThat(order.size()).isEqualTo(2);
  }

  @Test
  void movesWhileTheOrderIsBuiltWinOverTheScan() {
    // Given an order being built: not ready, pages refused
    ConversationOrder order = new ConversationOrder();
    assertThat(order.ready()).isFalse();
    assertThatThrownBy(() -> order.from(ConversationKeys.orderFrom(USER), 1, c -> false))
        .isInstanceOf(IllegalStateException.class);

    // When the processor moves b and adds d while the scan still reads b's older state
    order.move(new ConversationOrder.Position(key("b", false, 50), "b"));
    order.move(new ConversationOrder.Position(key("d", false, 40), "d"));
    order.load(List.of(pos("a", false, 30), pos("b", false, 20)));

    // Then the moves are applied over the scan
    assertThat(order.ready()).isTrue();
    assertThat(ids(order.from(ConversationKeys.orderFrom(USER), 10, c -> false))).containsExactly("b", "d", "a");
    assertThatThrownBy(() -> order.load(List.of())).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void theBadgeIsTheSumOverTheLatestPositionOfEachConversation() {
    // Given an order being built: its badge is not known yet
    ConversationOrder order = new ConversationOrder();
    assertThatThrownBy(order::totals).isInstanceOf(IllegalStateException.class);
    // and a move during the build (b: 5 unread, capped) over a scan that read b's older state (2 unread)
    order.move(new ConversationOrder.Position(key("b", false, 50), "b", 5, true));
    order.load(List.of(new ConversationOrder.Position(key("a", false, 30), "a", 3, false),
        new ConversationOrder.Position(key("b", false, 20), "b", 2, false)));
    // Then each conversation counts once, with its latest badge
    assertThat(order.totals()).isEqualTo(new ConversationTotals(8, 1));

    // When a is read (0 unread) and b is muted at the same position (adds nothing, not capped)
    order.move(new ConversationOrder.Position(key("a", false, 31), "a", 0, false));
    order.move(new ConversationOrder.Position(key("b", false, 50), "b", 0, false));
    // Then the badge is 0; a new conversation adds its own
    assertThat(order.totals()).isEqualTo(ConversationTotals.ZERO);
    order.move(new ConversationOrder.Position(key("c", false, 60), "c", 1, true));
    assertThat(order.totals()).isEqualTo(new ConversationTotals(1, 1));
    assertThat(order.size()).isEqualTo(3);
  }

  @Test
  void pagesTakenWhileTheProcessorMovesHoldEachConversationOnceInOrder() throws Exception {
    // Given 50 conversations of alice
    ConversationOrder order = new ConversationOrder();
    List<ConversationOrder.Position> start = new java.util.ArrayList<>();
    for (int i = 0; i < 50; i++) {
      start.add(pos("c" + i, false, i));
    }
    order.load(start);
    // When the processor's thread moves them 20,000 times (new activity, pins) while pages of ten are taken
    Thread processor = new Thread(() -> {
      java.util.Random random = new java.util.Random(7);
      for (int t = 0; t < 20_000; t++) {
        String c = "c" + random.nextInt(50);
        order.move(new ConversationOrder.Position(key(c, random.nextInt(10) == 0, 100 + t), c));
      }
    });
    processor.start();
    // Then every page is in strict list order, each conversation at most once
    java.util.Random random = new java.util.Random(11);
    for (int p = 0; p < 2_000; p++) {
      Bytes from = random.nextBoolean() ? ConversationKeys.orderFrom(USER) : key("x", false, 100 + random.nextInt(
          20_000));
      List<ConversationOrder.Position> page = order.from(from, 10, c -> false);
      assertThat(ids(page)).doesNotHaveDuplicates();
      for (int i = 1; i < page.size(); i++) {
        assertThat(page.get(i - 1).key().compareTo(page.get(i).key())).isNegative();
      }
    }
    processor.join();
    assertThat(order.size()).isEqualTo(50);
    assertThat(order.from(ConversationKeys.orderFrom(USER), 100, c -> false)).hasSize(50);
  }

  static ConversationOrder loaded(ConversationOrder.Position... positions) {
    ConversationOrder order = new ConversationOrder();
    order.load(List.of(positions));
    return order;
  }

  private static ConversationOrder.Position pos(String conversation, boolean pinned, long activity) {
    return new ConversationOrder.Position(key(conversation, pinned, activity), conversation);
  }

  private static Bytes key(String conversation, boolean pinned, long activity) {
    return ConversationKeys.order(USER, pinned, activity, conversation);
  }

  private static Bytes after(ConversationOrder.Position p) {
    return ConversationKeys.orderAfter(USER, ConversationKeys.cursor(p.key()));
  }

  private static List<String> ids(List<ConversationOrder.Position> page) {
    return page.stream().map(ConversationOrder.Position::conversation).toList();
  }
}
