package dev.impipe.inbox;

import static dev.impipe.inbox.FanoutThenStore.T0;
import static dev.impipe.inbox.FanoutThenStore.message;
import static dev.impipe.inbox.FanoutThenStore.recall;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipOp;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.inbox.conversations.ConversationList;
import dev.impipe.inbox.conversations.ConversationOrderCache;
import dev.impipe.inbox.conversations.ConversationOrders;
import dev.impipe.inbox.conversations.ConversationTopology;
import dev.impipe.inbox.conversations.LargeGroupCounts;
import dev.impipe.runtime.domain.Ids;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The list's in-memory order on the production fan-out and inbox-store topologies (TopologyTestDriver): once a user's
 * list was requested, every page read from the order equals the page read from all the user's states, whatever
 * arrives after (messages, pins, recalls, leaving, large groups' timelines), and a restart drops and rebuilds it.
 */
class ConversationOrderPagesTest {

  private static final String ALICE = "alice";
  private static final String BOB = "bob";

  @TempDir
  Path stateDir;

  private final ConversationOrders orders = new ConversationOrders(100);
  private FanoutThenStore p;
  private long clock;

  @AfterEach
  void tearDown() {
    p.close();
  }

  @Test
  void pagesFromTheOrderEqualPagesFromEveryStateAfterEachEntry() {
    // Given alice has six direct chats, each newer than the one before, and a group with bob
    p = new FanoutThenStore(stateDir, FanoutConfig.defaults(), InboxStoreConfig.defaults(), orders);
    for (int i = 0; i < 6; i++) {
      p.publish(timed(message("u" + i, chat(i), "m" + i, "hi " + i)));
    }
    p.change(ALICE, "g", ALICE, MembershipOp.JOIN);
    p.change(ALICE, "g", BOB, MembershipOp.JOIN);
    p.publish(timed(message(BOB, "g", "b1", "hello group")));

    // When her list is requested, then her order is built and kept, and its pages are those of a full read
    assertThat(cache().cached(ALICE)).isNull();
    assertSamePages(ALICE);
    assertThat(cache().cached(ALICE)).isNotNull();
    assertThat(cache().cached(ALICE).size()).isEqualTo(7);

    // When u0's chat (the oldest) gets a new message, then it moves to the top
    p.publish(timed(message("u0", chat(0), "m6", "again")));
    assertThat(assertSamePages(ALICE).get(0)).isEqualTo(chat(0));

    // When alice pins u2's chat, then it is first; unpinned again it goes back to its activity
    settings(ALICE, chat(2), null, true);
    assertThat(assertSamePages(ALICE).get(0)).isEqualTo(chat(2));
    settings(ALICE, chat(2), null, false);
    assertThat(assertSamePages(ALICE).get(0)).isEqualTo(chat(0));

    // When u5 recalls its message, u3 reads, and alice writes u1 herself
    p.publish(timed(recall("u5", chat(5), "r5", "m-u5-m5")));
    p.publish(timed(message("u3", chat(3), "m7", "read this")));
    p.publish(timed(message(ALICE, chat(1), "a1", "mine")));
    assertThat(assertSamePages(ALICE)).startsWith(chat(1), chat(3), chat(0));

    // When bob leaves the group and alice writes it (she stays listed in it, bob too as not a member)
    p.change(BOB, "g", BOB, MembershipOp.LEAVE);
    p.publish(timed(message(ALICE, "g", "a2", "bye bob")));
    assertThat(assertSamePages(ALICE).get(0)).isEqualTo("g");
    assertSamePages(BOB);
    assertThat(cache().cached(BOB)).isNotNull();
  }

  @Test
  void aLargeGroupIsPlacedByItsTimelineOnPagesFromTheOrderToo() {
    // Given groups of 3 or more are large: alice, bob and carol in g, and two direct chats of alice
    p = new FanoutThenStore(stateDir, FanoutConfig.defaults().withLargeGroupThreshold(2),
        InboxStoreConfig.defaults(), orders);
    p.change(ALICE, "g", ALICE, MembershipOp.JOIN);
    p.change(ALICE, "g", BOB, MembershipOp.JOIN);
    p.change(ALICE, "g", "carol", MembershipOp.JOIN);
    p.publish(timed(message("u1", chat(1), "m1", "one")));
    p.publish(timed(message("u2", chat(2), "m2", "two")));
    assertThat(assertSamePages(ALICE).get(0)).isEqualTo(chat(2));

    // When bob writes the group (its timeline only: no entry in alice's inbox moves it in her order)
    p.publish(timed(message(BOB, "g", "b1", "newest")));

    // Then the group comes first on pages from the order as on a full read
    assertThat(assertSamePages(ALICE)).containsExactly("g", chat(2), chat(1));
    // and when u1 writes again it goes above the group
    p.publish(timed(message("u1", chat(1), "m3", "again")));
    assertThat(assertSamePages(ALICE)).containsExactly(chat(1), "g", chat(2));
  }

  @Test
  void aRestartDropsTheOrderAndTheNextRequestBuildsItFromTheStates() {
    // Given alice's list was requested (her order kept) with three chats
    p = new FanoutThenStore(stateDir, FanoutConfig.defaults(), InboxStoreConfig.defaults(), orders);
    for (int i = 0; i < 3; i++) {
      p.publish(timed(message("u" + i, chat(i), "m" + i, "hi " + i)));
    }
    assertSamePages(ALICE);
    ConversationOrderCache before = cache();

    // When the inbox store restarts (its task closes, and opens again on what it restores)
    p.restartStore();

    // Then the task has a new cache without alice's order
    assertThat(cache()).isNotSameAs(before);
    assertThat(cache().cached(ALICE)).isNull();
    // When u0 writes while nobody lists alice, then her next request builds the order with it
    p.publish(timed(message("u0", chat(0), "m3", "after the restart")));
    assertThat(assertSamePages(ALICE)).containsExactly(chat(0), chat(2), chat(1));
    assertThat(cache().cached(ALICE)).isNotNull();
  }

  /**
   * Pages of two (following the cursors) and one page of all, read from the order and from all the states: each
   * equal; returns the list's conversations in order.
   */
  private List<String> assertSamePages(String user) {
    List<String> all = new ArrayList<>();
    Optional<String> after = Optional.empty();
    do {
      ConversationList.ListPage fromOrder = page(user, cache(), after, 2);
      ConversationList.ListPage fromAll = page(user, null, after, 2);
      assertThat(fromOrder).isEqualTo(fromAll);
      fromOrder.conversations().forEach(i -> all.add(i.conversationId()));
      after = Optional.ofNullable(fromOrder.next());
    } while (after.isPresent());
    assertThat(page(user, cache(), Optional.empty(), 100)).isEqualTo(page(user, null, Optional.empty(), 100));
    assertThat(all).doesNotHaveDuplicates();
    return all;
  }

  /** The page as the route builds it (large groups from their timelines), from the order or (null) every state. */
  private ConversationList.ListPage page(String user, ConversationOrderCache order, Optional<String> after,
      int limit) {
    LargeGroupCounts.Source timelines = (group, reader, ranges, readUpTo) -> LargeGroupCounts.read(
        p.storeView(ConversationTopology.STATES_STORE), p.storeView(InboxStoreTopology.INBOX_STORE), group, reader,
        ranges, readUpTo, 100);
    return ConversationList.page(p.storeView(ConversationTopology.STATES_STORE),
        p.storeView(InboxStoreTopology.LARGE_GROUPS_STORE), timelines,
        order, user, after, limit);
  }

  /** The cache of the only task's partition (0 on the test driver). */
  private ConversationOrderCache cache() {
    return orders.of(0);
  }

  private static String chat(int i) {
    return Ids.direct(ALICE, "u" + i);
  }

  /** Stamps each message a second after the one before (the list orders by message time). */
  private ChatMessage timed(ChatMessage m) {
    return ChatMessage.newBuilder(m).setSentAt(T0.plusSeconds(++clock)).build();
  }

  /** The inbox entry the settings route writes. */
  private void settings(String user, String conversation, Boolean muted, Boolean pinned) {
    InboxEntry entry = InboxEntry.newBuilder().setUserId(user).setType(InboxEntryType.CONVERSATION_SETTINGS)
        .setConversationId(conversation).setConversationSeq(-1).setTimestamp(T0.plusSeconds(++clock))
        .setMuted(muted).setPinned(pinned).build();
    String topic = p.topics.inbox().name();
    p.pipe(topic, new TestRecord<>(user.getBytes(StandardCharsets.UTF_8),
        p.topics.inbox().valueSerde().serializer().serialize(topic, entry), T0.plusSeconds(clock)));
  }
}
