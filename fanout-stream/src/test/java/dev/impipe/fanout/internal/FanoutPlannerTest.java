package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MessageType;
import dev.impipe.runtime.domain.HistoryKey;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The fan-out plan alone: who gets an entry, what is refused, where a group's records go. */
class FanoutPlannerTest {

  private static final Duration WINDOW = Duration.ofHours(1);

  private static ChatMessage.Builder group(MessageType type) {
    return ChatMessage.newBuilder().setMessageId("m2").setClientMsgId("c2").setType(type).setConversationId("g")
        .setConversationType(ConversationType.GROUP).setGroupId("g").setSenderId("alice").setBody("hi")
        .setRefMessageId(type == MessageType.RECALL ? "m1" : null).setReadUpToSeq(7L)
        .setSentAt(Instant.ofEpochMilli(5_000)).setAttributes(Map.of());
  }

  private static ChatMessage.Builder direct(MessageType type) {
    return group(type).setConversationId("d").setConversationType(ConversationType.DIRECT).setGroupId(null)
        .setRecipientId("bob");
  }

  private static SentCodec.Sent sent(String sender, String conversation, char mode) {
    return new SentCodec.Sent(sender, conversation, 42, mode, 3, 4_000, "c1");
  }

  @Test
  void aDirectMessageGoesToBothPartiesOnceEvenToOneself() {
    FanoutPlanner.Plan plan = FanoutPlanner.plan(direct(MessageType.MESSAGE).build(), false, null, WINDOW);
    assertThat(plan.refusal()).isNull();
    assertThat(plan.type()).isEqualTo(InboxEntryType.MESSAGE);
    assertThat(plan.audience().listed()).containsExactly("bob", "alice");
    assertThat(plan.historyOverwrite()).isNull();

    FanoutPlanner.Plan self = FanoutPlanner.plan(direct(MessageType.MESSAGE).setRecipientId("alice").build(), false,
        null, WINDOW);
    assertThat(self.audience().listed()).containsExactly("alice");
  }

  @Test
  void aGroupMessageGoesToTheMembersAndIsRefusedForANonMember() {
    FanoutPlanner.Plan plan = FanoutPlanner.plan(group(MessageType.MESSAGE).build(), true, null, WINDOW);
    assertThat(plan.audience()).isEqualTo(new FanoutPlanner.Audience(null, Long.MAX_VALUE, false));

    FanoutPlanner.Plan refused = FanoutPlanner.plan(group(MessageType.MESSAGE).build(), false, null, WINDOW);
    assertThat(refused.refusal()).isEqualTo(new Refusal("NOT_MEMBER", "sender alice is not a member of group g"));
    assertThat(refused.type()).isNull();
    assertThat(refused.audience()).isNull();
  }

  @Test
  void aReadMarkerGoesToTheReadersDevicesAndInADirectChatTheOtherParty() {
    assertThat(FanoutPlanner.plan(group(MessageType.READ).build(), true, null, WINDOW).audience().listed())
        .containsExactly("alice");
    assertThat(FanoutPlanner.plan(direct(MessageType.READ).build(), false, null, WINDOW).audience().listed())
        .containsExactly("alice", "bob");
    assertThat(FanoutPlanner.plan(group(MessageType.READ).build(), false, null, WINDOW).refusal())
        .isEqualTo(new Refusal("NOT_MEMBER", "reader alice is not a member of group g"));
  }

  @Test
  void aRecallIsRefusedForAnUnknownMessageSomeoneElsesOrOneOfAnotherConversation() {
    ChatMessage recall = group(MessageType.RECALL).build();
    assertThat(FanoutPlanner.plan(recall, true, null, WINDOW).refusal()).isEqualTo(new Refusal("UNKNOWN_MESSAGE",
        "RECALL of unknown message m1 (or older than the recall window PT1H)"));
    assertThat(FanoutPlanner.plan(recall, true, sent("bob", "g", 'W'), WINDOW).refusal()).isEqualTo(
        new Refusal("NOT_SENDER", "RECALL of message m1 by alice, but only its sender may recall it"));
    assertThat(FanoutPlanner.plan(recall, true, sent("alice", "h", 'W'), WINDOW).refusal()).isEqualTo(
        new Refusal("UNKNOWN_MESSAGE", "RECALL of message m1 in conversation g, but it was sent in another "
            + "conversation"));
  }

  @Test
  void anAcceptedGroupRecallGoesToWhoeverWasAMemberWhenTheOriginalWasSentAndReplacesItInHistory() {
    FanoutPlanner.Plan plan = FanoutPlanner.plan(group(MessageType.RECALL).build(), false,
        sent("alice", "g", 'T'), WINDOW);

    assertThat(plan.refusal()).isNull();
    assertThat(plan.type()).isEqualTo(InboxEntryType.RECALL);
    assertThat(plan.audience()).isEqualTo(new FanoutPlanner.Audience(null, 42, true));
    assertThat(plan.recalledMode()).isEqualTo(FanoutPlanner.TIMELINE);
    assertThat(plan.historyOverwrite().key).isEqualTo(HistoryKey.of("g", 3));
    ChatMessage stub = plan.historyOverwrite().value;
    assertThat(stub.getMessageId()).isEqualTo("m1");
    assertThat(stub.getClientMsgId()).isEqualTo("c1");
    assertThat(stub.getType()).isEqualTo(MessageType.MESSAGE);
    assertThat(stub.getBody()).isNull();
    assertThat(stub.getSenderId()).isEqualTo("alice");
    assertThat(stub.getGroupId()).isEqualTo("g");
    assertThat(stub.getConversationType()).isEqualTo(ConversationType.GROUP);
    assertThat(stub.getSentAt()).isEqualTo(Instant.ofEpochMilli(4_000));
    assertThat(stub.getAttributes()).isEqualTo(Map.of(FanoutPlanner.RECALLED_ATTRIBUTE, "m2"));

    assertThat(FanoutPlanner.plan(group(MessageType.RECALL).build(), false, sent("alice", "g", 'W'), WINDOW)
        .recalledMode()).isEqualTo(FanoutPlanner.WRITE_DIFFUSED);
    assertThat(FanoutPlanner.plan(group(MessageType.RECALL).build(), false, sent("alice", "g", 'X'), WINDOW)
        .recalledMode()).isEqualTo(FanoutPlanner.UNKNOWN_MODE);
  }

  @Test
  void aDirectRecallGoesToBothParties() {
    FanoutPlanner.Plan plan = FanoutPlanner.plan(direct(MessageType.RECALL).build(), false,
        sent("alice", "d", 'W'), WINDOW);
    assertThat(plan.audience().listed()).containsExactly("bob", "alice");
    assertThat(plan.recalledMode()).isEqualTo(FanoutPlanner.UNKNOWN_MODE);
    assertThat(plan.historyOverwrite().key).isEqualTo(HistoryKey.of("d", 3));
    assertThat(plan.historyOverwrite().value.getRecipientId()).isEqualTo("bob");
  }

  @Test
  void controlAndUnknownTypesNeverReachThePlanner() {
    assertThatThrownBy(() -> FanoutPlanner.plan(group(MessageType.JOIN).build(), true, null, WINDOW))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aGroupSwitchesModeWhenItsSizeSaysSoUnlessASwitchIsStillBeingWritten() {
    GroupState small = new GroupState(10, false, 0, null);
    GroupState big = new GroupState(10, true, 0, null);
    assertThat(FanoutPlanner.large(small, 5, false)).isTrue();
    assertThat(FanoutPlanner.large(small, 5, true)).isFalse();
    assertThat(FanoutPlanner.large(small, 50, true)).isFalse();
    assertThat(FanoutPlanner.large(big, 5, true)).isTrue();
    assertThat(FanoutPlanner.large(big, 50, true)).isTrue();
    assertThat(FanoutPlanner.large(big, 50, false)).isFalse();
  }

  @Test
  void aLargeGroupsMessageGoesToTheTimelineOnlyAReadAlwaysToTheMembers() {
    assertThat(FanoutPlanner.route(InboxEntryType.MESSAGE, true, FanoutPlanner.UNKNOWN_MODE))
        .isEqualTo(new FanoutPlanner.Route(false, true));
    assertThat(FanoutPlanner.route(InboxEntryType.MESSAGE, false, FanoutPlanner.UNKNOWN_MODE))
        .isEqualTo(new FanoutPlanner.Route(true, false));
    assertThat(FanoutPlanner.route(InboxEntryType.READ, true, FanoutPlanner.UNKNOWN_MODE))
        .isEqualTo(new FanoutPlanner.Route(true, false));
    assertThat(new FanoutPlanner.Route(false, true).savesWrites()).isTrue();
    assertThat(new FanoutPlanner.Route(true, true).savesWrites()).isFalse();
    assertThat(new FanoutPlanner.Route(true, false).savesWrites()).isFalse();
  }

  @Test
  void aRecallGoesWhereTheOriginalsCopiesAreWhateverTheModeIsNow() {
    char w = FanoutPlanner.WRITE_DIFFUSED;
    char t = FanoutPlanner.TIMELINE;
    char unknown = FanoutPlanner.UNKNOWN_MODE;
    InboxEntryType recall = InboxEntryType.RECALL;
    assertThat(FanoutPlanner.route(recall, true, w)).isEqualTo(new FanoutPlanner.Route(true, false));
    assertThat(FanoutPlanner.route(recall, false, w)).isEqualTo(new FanoutPlanner.Route(true, false));
    assertThat(FanoutPlanner.route(recall, true, t)).isEqualTo(new FanoutPlanner.Route(false, true));
    assertThat(FanoutPlanner.route(recall, false, t)).isEqualTo(new FanoutPlanner.Route(true, true));
    assertThat(FanoutPlanner.route(recall, true, unknown)).isEqualTo(new FanoutPlanner.Route(false, true));
    assertThat(FanoutPlanner.route(recall, false, unknown)).isEqualTo(new FanoutPlanner.Route(true, false));
  }

  @Test
  void theRecallWindowStartsNoEarlierThanTheEpoch() {
    assertThat(FanoutPlanner.recallFrom(10_000_000, WINDOW)).isEqualTo(10_000_000 - 3_600_000);
    assertThat(FanoutPlanner.recallFrom(1_000, WINDOW)).isZero();
  }

  @Test
  void onlyAMessageEntryCarriesTheBody() {
    ChatMessage m = group(MessageType.MESSAGE).build();
    InboxEntry entry = FanoutPlanner.entry(m, "carol", InboxEntryType.MESSAGE, 9);
    assertThat(entry.getUserId()).isEqualTo("carol");
    assertThat(entry.getBody()).isEqualTo("hi");
    assertThat(entry.getConversationSeq()).isEqualTo(9);
    assertThat(entry.getConversationId()).isEqualTo("g");
    assertThat(entry.getMessageId()).isEqualTo("m2");
    assertThat(entry.getSenderId()).isEqualTo("alice");
    assertThat(entry.getReadUpToSeq()).isEqualTo(7L);
    assertThat(entry.getTimestamp()).isEqualTo(Instant.ofEpochMilli(5_000));
    assertThat(FanoutPlanner.entry(m, "carol", InboxEntryType.READ, 9).getBody()).isNull();
    assertThat(List.of(FanoutPlanner.entry(group(MessageType.RECALL).build(), "c", InboxEntryType.RECALL, 1)))
        .singleElement().satisfies(e -> assertThat(e.getRefMessageId()).isEqualTo("m1"));
  }
}
