package dev.impipe.inbox;

import static dev.impipe.inbox.FanoutThenStore.T0;
import static dev.impipe.inbox.FanoutThenStore.message;
import static dev.impipe.inbox.FanoutThenStore.recall;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.inbox.conversations.ConversationList;
import dev.impipe.inbox.conversations.ConversationState;
import dev.impipe.inbox.conversations.ConversationTopology;
import dev.impipe.inbox.conversations.LargeGroupCounts;
import dev.impipe.runtime.domain.Ids;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.streams.TestInputTopic;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The conversation list on the production fan-out and inbox-store topologies (TopologyTestDriver): what a user's
 * list shows after messages, reads from any device, recalls, membership changes and settings.
 */
class ConversationListTest {

  private static final String ALICE = "alice";
  private static final String BOB = "bob";
  private static final String CAROL = "carol";
  private static final String DIRECT = Ids.direct(ALICE, BOB);

  @TempDir
  Path stateDir;

  private FanoutThenStore p;
  private long clock;

  @BeforeEach
  void setUp() {
    p = new FanoutThenStore(stateDir, FanoutConfig.defaults(), InboxStoreConfig.defaults());
  }

  @AfterEach
  void tearDown() {
    p.close();
  }

  @Test
  void messagesFromOthersAreUnreadAndOwnMessagesAreNot() {
    // Given bob writes alice twice and alice answers once
    p.publish(timed(message(BOB, DIRECT, "b1", "hi")));
    long second = p.publish(timed(message(BOB, DIRECT, "b2", "there?")));
    long answer = p.publish(timed(message(ALICE, DIRECT, "a1", "yes")));

    // Then alice's list shows bob's two as unread, her answer as the last message
    ConversationState a = state(ALICE, DIRECT);
    assertThat(a.unread()).isEqualTo(2);
    assertThat(a.last().conversationSeq()).isEqualTo(answer);
    assertThat(a.last().body()).isEqualTo("yes");
    assertThat(a.last().senderId()).isEqualTo(ALICE);
    assertThat(a.readUpToSeq()).isEqualTo(-1);
    // and bob's list counts only alice's one message
    assertThat(state(BOB, DIRECT).unread()).isEqualTo(1);
    assertThat(page(ALICE, 10).unreadTotal()).isEqualTo(2);
    assertThat(second).isLessThan(answer);
  }

  @Test
  void aReadMarkerFromAnotherDeviceClearsWhatItCovers() {
    // Given three messages from bob
    p.publish(timed(message(BOB, DIRECT, "b1", "one")));
    long two = p.publish(timed(message(BOB, DIRECT, "b2", "two")));
    p.publish(timed(message(BOB, DIRECT, "b3", "three")));
    assertThat(state(ALICE, DIRECT).unread()).isEqualTo(3);

    // When alice's tablet marks the conversation read up to the second
    p.publish(read(ALICE, "tab", DIRECT, "r1", two));

    // Then alice's list (on any device) shows one unread, and her marker
    assertThat(state(ALICE, DIRECT).unread()).isEqualTo(1);
    assertThat(state(ALICE, DIRECT).readUpToSeq()).isEqualTo(two);
    assertThat(page(ALICE, 10).unreadTotal()).isEqualTo(1);
    // and bob's read receipt does not touch his own count of alice's messages (there are none)
    assertThat(state(BOB, DIRECT).unread()).isZero();

    // When an older marker arrives from the phone, nothing moves back
    p.publish(read(ALICE, "phone", DIRECT, "r2", 0));
    assertThat(state(ALICE, DIRECT).readUpToSeq()).isEqualTo(two);
    assertThat(state(ALICE, DIRECT).unread()).isEqualTo(1);
  }

  @Test
  void aRecallBeforeReadingTakesTheMessageOffTheCountAndTheLastBody() {
    // Given two unread messages from bob
    p.publish(timed(message(BOB, DIRECT, "b1", "one")));
    p.publish(timed(message(BOB, DIRECT, "b2", "oops")));

    // When bob recalls the second
    p.publish(timed(recall(BOB, DIRECT, "b3", "m-bob-b2")));

    // Then alice has one unread, and the last message has no body any more
    ConversationState a = state(ALICE, DIRECT);
    assertThat(a.unread()).isEqualTo(1);
    assertThat(a.last().messageId()).isEqualTo("m-bob-b2");
    assertThat(a.last().recalled()).isTrue();
    assertThat(a.last().body()).isNull();
  }

  @Test
  void aRecallAfterReadingChangesNoCount() {
    // Given alice read bob's two messages
    p.publish(timed(message(BOB, DIRECT, "b1", "one")));
    long two = p.publish(timed(message(BOB, DIRECT, "b2", "two")));
    p.publish(read(ALICE, "phone", DIRECT, "r1", two));
    // and a third one arrives, unread
    p.publish(timed(message(BOB, DIRECT, "b3", "three")));

    // When bob recalls the first (already read)
    p.publish(timed(recall(BOB, DIRECT, "b4", "m-bob-b1")));

    // Then alice's unread stays 1 and the last message keeps its body
    assertThat(state(ALICE, DIRECT).unread()).isEqualTo(1);
    assertThat(state(ALICE, DIRECT).last().body()).isEqualTo("three");
  }

  @Test
  void aLeftGroupStaysListedAsNotMemberAndARejoinMakesItAMemberAgain() {
    // Given alice's group with bob, and one message from bob
    p.change(ALICE, "g", ALICE, MembershipOp.JOIN);
    p.change(ALICE, "g", BOB, MembershipOp.JOIN);
    p.publish(timed(message(BOB, "g", "b1", "hello group")));
    assertThat(state(ALICE, "g").member()).isTrue();
    assertThat(state(ALICE, "g").unread()).isEqualTo(1);

    // When bob leaves
    p.change(BOB, "g", BOB, MembershipOp.LEAVE);

    // Then the group is still on bob's list, as not a member, with its last message
    ConversationState left = state(BOB, "g");
    assertThat(left.member()).isFalse();
    assertThat(left.last().body()).isEqualTo("hello group");
    assertThat(conversations(BOB)).containsExactly("g");

    // When alice adds him again and writes
    p.change(ALICE, "g", BOB, MembershipOp.JOIN);
    p.publish(timed(message(ALICE, "g", "a1", "welcome back")));

    // Then he is a member again, with the new message unread
    ConversationState back = state(BOB, "g");
    assertThat(back.member()).isTrue();
    assertThat(back.unread()).isEqualTo(1);
    assertThat(back.last().body()).isEqualTo("welcome back");
  }

  @Test
  void settingsEntriesPinAndMuteAndTheBadgeLeavesMutedOnesOut() {
    // Given alice has an older direct chat with bob (2 unread) and a newer one with carol (1 unread)
    p.publish(timed(message(BOB, DIRECT, "b1", "one")));
    p.publish(timed(message(BOB, DIRECT, "b2", "two")));
    String withCarol = Ids.direct(ALICE, CAROL);
    p.publish(timed(message(CAROL, withCarol, "c1", "hey")));
    assertThat(conversations(ALICE)).containsExactly(withCarol, DIRECT);

    // When alice pins the chat with bob and mutes the one with carol (the entries the settings route writes)
    settings(ALICE, DIRECT, null, true);
    settings(ALICE, withCarol, true, null);

    // Then the pinned one comes first, both keep their counts, and the badge leaves the muted one out
    assertThat(conversations(ALICE)).containsExactly(DIRECT, withCarol);
    assertThat(state(ALICE, DIRECT).pinned()).isTrue();
    assertThat(state(ALICE, withCarol).muted()).isTrue();
    assertThat(state(ALICE, withCarol).unread()).isEqualTo(1);
    assertThat(page(ALICE, 10).unreadTotal()).isEqualTo(2);

    // When she unpins and unmutes
    settings(ALICE, DIRECT, false, false);
    settings(ALICE, withCarol, false, null);

    // Then the order is by activity again and the badge counts all
    assertThat(conversations(ALICE)).containsExactly(withCarol, DIRECT);
    assertThat(page(ALICE, 10).unreadTotal()).isEqualTo(3);
  }

  @Test
  void pagesFollowTheCursorWithoutGapsOrRepeats() {
    // Given alice has five conversations, each newer than the one before
    for (int i = 0; i < 5; i++) {
      p.publish(timed(message("u" + i, Ids.direct(ALICE, "u" + i), "m" + i, "hi " + i)));
    }

    // When she reads her list two at a time
    ConversationList.ListPage first = page(ALICE, 2);
    ConversationList.ListPage second = ConversationList.page(p.storeView(ConversationTopology.STATES_STORE),
        ALICE, Optional.of(first.next()), 2);
    ConversationList.ListPage third = ConversationList.page(p.storeView(ConversationTopology.STATES_STORE),
        ALICE, Optional.of(second.next()), 2);

    // Then the pages hold the newest first, each once, and the last has no next
    assertThat(ids(first)).containsExactly(Ids.direct(ALICE, "u4"), Ids.direct(ALICE, "u3"));
    assertThat(ids(second)).containsExactly(Ids.direct(ALICE, "u2"), Ids.direct(ALICE, "u1"));
    assertThat(ids(third)).containsExactly(Ids.direct(ALICE, "u0"));
    assertThat(third.next()).isNull();
    assertThat(first.unreadTotal()).isEqualTo(5);
  }

  @Test
  void aLargeGroupIsCountedFromItsTimelineFromEachMembersJoin() {
    // Given a fan-out that makes groups of 2 or more large, alice's group with bob
    p.close();
    p = new FanoutThenStore(stateDir.resolve("large"), FanoutConfig.defaults().withLargeGroupThreshold(2),
        InboxStoreConfig.defaults());
    p.change(ALICE, "g", ALICE, MembershipOp.JOIN);
    p.change(ALICE, "g", BOB, MembershipOp.JOIN);
    // When bob writes (a copy each), carol joins (the group turns large: from now on its messages go to the
    // timeline #g only), and bob writes again
    p.publish(timed(message(BOB, "g", "b1", "first")));
    p.change(ALICE, "g", CAROL, MembershipOp.JOIN);
    long second = p.publish(timed(message(BOB, "g", "b2", "second")));

    // Then no member got a copy of the second, yet alice counts both (one copy, one from the timeline), carol
    // only the one after her join, bob none of his own
    assertThat(p.<InboxEntry>storeView(InboxStoreTopology.INBOX_STORE).range(
        dev.impipe.inbox.internal.StoreKeys.entry(ALICE, 0),
        dev.impipe.inbox.internal.StoreKeys.entry(ALICE, Long.MAX_VALUE), false, 100))
        .noneMatch(kv -> "m-bob-b2".equals(kv.value.getMessageId()));
    assertThat(listed(ALICE, "g").unread()).isEqualTo(2);
    assertThat(listed(CAROL, "g").unread()).isEqualTo(1);
    assertThat(listed(BOB, "g").unread()).isZero();
    assertThat(listed(ALICE, "g").last().body()).isEqualTo("second");
    assertThat(largePage(ALICE).unreadTotal()).isEqualTo(2);

    // When alice reads up to the second message, and bob recalls it
    p.publish(groupRead(ALICE, "g", "r1", second));
    p.publish(timed(recall(BOB, "g", "b3", "m-bob-b2")));

    // Then alice has nothing unread, carol's count drops by the recalled one, and the last body is gone
    assertThat(listed(ALICE, "g").unread()).isZero();
    assertThat(listed(CAROL, "g").unread()).isZero();
    assertThat(listed(CAROL, "g").last().recalled()).isTrue();
    assertThat(largePage(ALICE).unreadTotal()).isZero();
  }

  @Test
  void aLargeGroupMovesUpWithItsTimelineAndPagesStayWhole() {
    // Given a fan-out that makes groups of 3 or more large: alice, bob and carol in group g (large from the start)
    p.close();
    p = new FanoutThenStore(stateDir.resolve("order"), FanoutConfig.defaults().withLargeGroupThreshold(2),
        InboxStoreConfig.defaults());
    p.change(ALICE, "g", ALICE, MembershipOp.JOIN);
    p.change(ALICE, "g", BOB, MembershipOp.JOIN);
    p.change(ALICE, "g", CAROL, MembershipOp.JOIN);
    // When u1 then u2 write alice directly, and then bob writes the group (to its timeline only)
    p.publish(timed(message("u1", Ids.direct(ALICE, "u1"), "m1", "one")));
    p.publish(timed(message("u2", Ids.direct(ALICE, "u2"), "m2", "two")));
    p.publish(timed(message(BOB, "g", "b1", "newest")));

    // Then the group comes first (its timeline's last message is the newest activity), then the direct chats
    assertThat(ids(largePage(ALICE, Optional.empty(), 10))).containsExactly("g", Ids.direct(ALICE, "u2"),
        Ids.direct(ALICE, "u1"));
    // And pages of one follow the same order, each conversation once
    ConversationList.ListPage first = largePage(ALICE, Optional.empty(), 1);
    ConversationList.ListPage second = largePage(ALICE, Optional.of(first.next()), 1);
    ConversationList.ListPage third = largePage(ALICE, Optional.of(second.next()), 1);
    assertThat(ids(first)).containsExactly("g");
    assertThat(ids(second)).containsExactly(Ids.direct(ALICE, "u2"));
    assertThat(ids(third)).containsExactly(Ids.direct(ALICE, "u1"));
    assertThat(third.next()).isNull();

    // When u1 writes again, then u1's chat is first; pinned u2 goes above both
    p.publish(timed(message("u1", Ids.direct(ALICE, "u1"), "m3", "again")));
    assertThat(ids(largePage(ALICE, Optional.empty(), 10))).containsExactly(Ids.direct(ALICE, "u1"), "g",
        Ids.direct(ALICE, "u2"));
    settings(ALICE, Ids.direct(ALICE, "u2"), null, true);
    assertThat(ids(largePage(ALICE, Optional.empty(), 10))).containsExactly(Ids.direct(ALICE, "u2"),
        Ids.direct(ALICE, "u1"), "g");
    ConversationList.ListPage pinned = largePage(ALICE, Optional.empty(), 2);
    assertThat(ids(pinned)).containsExactly(Ids.direct(ALICE, "u2"), Ids.direct(ALICE, "u1"));
    assertThat(ids(largePage(ALICE, Optional.of(pinned.next()), 2))).containsExactly("g");
  }

  @Test
  void aCountThatHitItsCapSaysSo() {
    // Given a large group g of alice, bob and carol (groups of 3 or more are large)
    p.close();
    p = new FanoutThenStore(stateDir.resolve("capped"), FanoutConfig.defaults().withLargeGroupThreshold(2),
        InboxStoreConfig.defaults());
    p.change(ALICE, "g", ALICE, MembershipOp.JOIN);
    p.change(ALICE, "g", BOB, MembershipOp.JOIN);
    p.change(ALICE, "g", CAROL, MembershipOp.JOIN);
    // When bob writes three messages to the group
    for (int i = 1; i <= 3; i++) {
      p.publish(timed(message(BOB, "g", "b" + i, "hi " + i)));
    }

    // Then with IM_CONVERSATION_LARGE_UNREAD_MAX=2 the count stops at 2 and says it is capped, page and total
    ConversationList.ListPage capped = largePage(ALICE, Optional.empty(), 10, 2);
    assertThat(capped.conversations().get(0).state().unread()).isEqualTo(2);
    assertThat(capped.conversations().get(0).unreadCapped()).isTrue();
    assertThat(capped.unreadTotalCapped()).isTrue();
    // And with room for all three it is exact
    ConversationList.ListPage exact = largePage(ALICE, Optional.empty(), 10, 100);
    assertThat(exact.conversations().get(0).state().unread()).isEqualTo(3);
    assertThat(exact.conversations().get(0).unreadCapped()).isFalse();
    assertThat(exact.unreadTotalCapped()).isFalse();
    // And a conversation with more unread than IM_CONVERSATION_UNREAD_TRACKED indexes (some untracked) is capped
    ConversationState untracked = ConversationState.empty().withUnread(5, 2, 3);
    assertThat(new ConversationList.Item(DIRECT, untracked).unreadCapped()).isTrue();
    assertThat(new ConversationList.Item(DIRECT, untracked.withUnread(3, 0, -1)).unreadCapped()).isFalse();
  }

  @Test
  void theListOutlivesTheInboxRetention() {
    // Given (now = T0) bob wrote alice once
    p.publish(timed(message(BOB, DIRECT, "b1", "a month ago")));

    // When a month passes (the inbox sweep runs and removes the entry)
    p.store.advanceWallClockTime(Duration.ofDays(30));

    // Then the inbox is empty but the conversation is still listed with its last message and unread count
    assertThat(p.<InboxEntry>storeView(InboxStoreTopology.INBOX_STORE).range(
        dev.impipe.inbox.internal.StoreKeys.entry(ALICE, 0), dev.impipe.inbox.internal.StoreKeys.entry(ALICE,
            Long.MAX_VALUE),
        false, 10)).isEmpty();
    assertThat(state(ALICE, DIRECT).last().body()).isEqualTo("a month ago");
    assertThat(state(ALICE, DIRECT).unread()).isEqualTo(1);
  }

  /** Stamps each message a second after the one before (the list orders by message time). */
  private ChatMessage timed(ChatMessage m) {
    return ChatMessage.newBuilder(m).setSentAt(T0.plusSeconds(++clock)).build();
  }

  private void settings(String user, String conversation, Boolean muted, Boolean pinned) {
    TestInputTopic<String, InboxEntry> inbox = p.store.createInputTopic(p.topics.inbox().name(),
        p.topics.inbox().keySerde().serializer(), p.topics.inbox().valueSerde().serializer());
    inbox.pipeInput(user, InboxEntry.newBuilder().setUserId(user).setType(InboxEntryType.CONVERSATION_SETTINGS)
        .setConversationId(conversation).setConversationSeq(-1).setTimestamp(T0.plusSeconds(++clock)).setMuted(muted)
        .setPinned(pinned).build(), T0.plusSeconds(clock));
  }

  private static ChatMessage read(String reader, String device, String conversation, String clientMsgId, long upTo) {
    String other = conversation.substring(2).replace(reader, "").replace(":", "");
    return ChatMessage.newBuilder().setMessageId("m-" + reader + "-" + clientMsgId).setClientMsgId(clientMsgId)
        .setConversationId(conversation).setConversationType(ConversationType.DIRECT).setType(MessageType.READ)
        .setSenderId(reader).setSenderDeviceId(device).setRecipientId(other).setReadUpToSeq(upTo)
        .setSentAt(T0).setAttributes(Map.of()).build();
  }

  /** The page as the route builds it, large groups read from their timelines (one partition here). */
  private ConversationList.ListPage largePage(String user) {
    return largePage(user, Optional.empty(), 100);
  }

  private ConversationList.ListPage largePage(String user, Optional<String> after, int limit) {
    return largePage(user, after, limit, 100);
  }

  private ConversationList.ListPage largePage(String user, Optional<String> after, int limit, int cap) {
    LargeGroupCounts.Source timelines = (group, reader, ranges, readUpTo) -> LargeGroupCounts.read(
        p.storeView(ConversationTopology.STATES_STORE), p.storeView(InboxStoreTopology.INBOX_STORE), group, reader,
        ranges, readUpTo, cap);
    return ConversationList.page(p.storeView(ConversationTopology.STATES_STORE),
        p.storeView(InboxStoreTopology.LARGE_GROUPS_STORE), timelines,
        user, after, limit);
  }

  private ConversationState listed(String user, String conversation) {
    return largePage(user).conversations().stream().filter(i -> i.conversationId().equals(conversation))
        .findFirst().orElseThrow(() -> new AssertionError(conversation + " not listed for " + user)).state();
  }

  private static ChatMessage groupRead(String reader, String group, String clientMsgId, long upTo) {
    return ChatMessage.newBuilder().setMessageId("m-" + reader + "-" + clientMsgId).setClientMsgId(clientMsgId)
        .setConversationId(group).setConversationType(ConversationType.GROUP).setGroupId(group)
        .setType(MessageType.READ).setSenderId(reader).setReadUpToSeq(upTo).setSentAt(T0)
        .setAttributes(Map.of()).build();
  }

  private ConversationState state(String user, String conversation) {
    return p.<byte[]>storeView(ConversationTopology.STATES_STORE)
        .get(dev.impipe.inbox.conversations.ConversationKeys.state(user, conversation))
        .map(ConversationState::decode).orElseThrow(() -> new AssertionError(conversation + " not on the list of "
            + user));
  }

  private ConversationList.ListPage page(String user, int limit) {
    return ConversationList.page(p.storeView(ConversationTopology.STATES_STORE),
        user, Optional.empty(), limit);
  }

  private List<String> conversations(String user) {
    return ids(page(user, 100));
  }

  private static List<String> ids(ConversationList.ListPage page) {
    return page.conversations().stream().map(ConversationList.Item::conversationId).toList();
  }
}
