package dev.impipe.push;

import static dev.impipe.avro.InboxEntryType.CONVERSATION_JOINED;
import static dev.impipe.avro.InboxEntryType.CONVERSATION_LEFT;
import static dev.impipe.avro.InboxEntryType.CONVERSATION_MODE;
import static dev.impipe.avro.InboxEntryType.MESSAGE;
import static dev.impipe.avro.InboxEntryType.RECALL;
import static dev.impipe.push.GroupFeed.Verdict.BEYOND;
import static dev.impipe.push.GroupFeed.Verdict.PUSH;
import static dev.impipe.push.GroupFeed.Verdict.SKIP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** What a connection pushes of a large group's live timeline: what the merged sync would show the member. */
class GroupFeedTest {

  @Test
  void pushesExactlyTheMessagesInsideTheMembersIntervals() {
    // Given bo reads conversation seqs 5..9 and from 12 on (as a sync page told it, through inbox seq 40)
    GroupFeed feed = GroupFeed.of("5-10,12-", 40);

    // Then messages inside are pushed, outside skipped, and nothing is past the open interval
    assertThat(feed.offer("bo", MESSAGE, 5, "ann")).isEqualTo(PUSH);
    assertThat(feed.offer("bo", MESSAGE, 9, "ann")).isEqualTo(PUSH);
    assertThat(feed.offer("bo", RECALL, 12, "ann")).isEqualTo(PUSH);
    assertThat(feed.offer("bo", MESSAGE, 4, "ann")).isEqualTo(SKIP);
    assertThat(feed.offer("bo", MESSAGE, 10, "ann")).isEqualTo(SKIP);
    assertThat(feed.offer("bo", MESSAGE, 11, "ann")).isEqualTo(SKIP);
    assertThat(feed.reads()).isTrue();
    assertThat(feed.through()).isEqualTo(40);
  }

  @Test
  void otherMembersLeavesAreNeverShown() {
    GroupFeed feed = GroupFeed.of("5-", 40);
    assertThat(feed.offer("bo", CONVERSATION_LEFT, 7, "cy")).isEqualTo(SKIP);
    assertThat(feed.offer("bo", MESSAGE, 8, "ann")).isEqualTo(PUSH);
  }

  @Test
  void theMembersOwnLeaveInTheTimelineStopsTheFeedBeforeTheInboxAppliedIt() {
    // Given bo reads from 5 on, and the timeline shows bo's leave at 8 (bo's inbox has not applied it yet)
    GroupFeed feed = GroupFeed.of("5-", 40);
    assertThat(feed.offer("bo", CONVERSATION_LEFT, 8, "bo")).isEqualTo(SKIP);

    // Then nothing after it is pushed, even inside the interval the store still shows open
    assertThat(feed.stopped()).isTrue();
    assertThat(feed.offer("bo", MESSAGE, 9, "ann")).isEqualTo(SKIP);
    feed.replace("5-", 41);
    assertThat(feed.offer("bo", MESSAGE, 10, "ann")).isEqualTo(SKIP);

    // When the inbox applies the leave (interval 5..7), the next timeline entry is past everything: stop listening
    feed.replace("5-8", 42);
    assertThat(feed.stopped()).isFalse();
    assertThat(feed.offer("bo", MESSAGE, 11, "ann")).isEqualTo(BEYOND);
  }

  @Test
  void aLeaveAlreadyAppliedAndFollowedByARejoinAtTheSameSeqIsNotAStop() {
    // Given bo left at 8 and was added again at 8 (no message in between)
    GroupFeed feed = GroupFeed.of("5-8,8-", 42);

    // Then bo's leave marker at 8 is skipped like any leave, and the new interval is read
    assertThat(feed.offer("bo", CONVERSATION_LEFT, 8, "bo")).isEqualTo(SKIP);
    assertThat(feed.stopped()).isFalse();
    assertThat(feed.offer("bo", MESSAGE, 8, "ann")).isEqualTo(PUSH);
  }

  @Test
  void theLeaversOwnMarkerAfterTheAppliedLeaveEndsTheFeed() {
    GroupFeed feed = GroupFeed.of("5-8", 42);
    assertThat(feed.offer("bo", MESSAGE, 7, "ann")).isEqualTo(PUSH);
    assertThat(feed.offer("bo", CONVERSATION_LEFT, 8, "bo")).isEqualTo(BEYOND);
    assertThat(feed.offer("bo", CONVERSATION_LEFT, 4, "cy")).isEqualTo(SKIP);
  }

  @Test
  void membershipEntriesNewerThanTheStoresAnswerChangeTheIntervals() {
    // Given a group bo is not known to read
    GroupFeed feed = GroupFeed.none();
    assertThat(feed.reads()).isFalse();
    assertThat(feed.offer("bo", MESSAGE, 3, "ann")).isEqualTo(BEYOND);
    // A leave of a small group changes nothing
    assertThat(feed.apply(10, CONVERSATION_LEFT, 3, false)).isFalse();
    assertThat(feed.reads()).isFalse();
    assertThat(feed.through()).isEqualTo(10);

    // When bo joins it while it is large (inbox seq 20, from conversation seq 6): an interval opens
    assertThat(feed.apply(20, CONVERSATION_JOINED, 6, true)).isTrue();
    assertThat(feed.offer("bo", MESSAGE, 6, "ann")).isEqualTo(PUSH);
    assertThat(feed.offer("bo", MESSAGE, 5, "ann")).isEqualTo(SKIP);
    // An entry the intervals already reflect is not applied twice
    assertThat(feed.apply(20, CONVERSATION_LEFT, 9, false)).isFalse();
    assertThat(feed.offer("bo", MESSAGE, 9, "ann")).isEqualTo(PUSH);

    // When the group switches back to write diffusion at 9: later timeline entries are past it
    assertThat(feed.apply(21, CONVERSATION_MODE, 9, false)).isFalse();
    assertThat(feed.offer("bo", MESSAGE, 8, "ann")).isEqualTo(PUSH);
    assertThat(feed.offer("bo", MESSAGE, 9, "ann")).isEqualTo(BEYOND);
    assertThat(feed.through()).isEqualTo(21);
  }

  @Test
  void aNewMembershipEntryClearsAStop() {
    GroupFeed feed = GroupFeed.of("5-", 40);
    feed.offer("bo", CONVERSATION_LEFT, 8, "bo");
    // bo's leave and a rejoin at 8 reach the inbox
    assertThat(feed.apply(41, CONVERSATION_LEFT, 8, false)).isFalse();
    assertThat(feed.apply(42, CONVERSATION_JOINED, 8, true)).isTrue();
    assertThat(feed.stopped()).isFalse();
    assertThat(feed.offer("bo", MESSAGE, 8, "ann")).isEqualTo(PUSH);
  }

  @Test
  void malformedRangesAreRefused() {
    assertThatThrownBy(() -> GroupFeed.of("9-5", 1)).isInstanceOf(IllegalArgumentException.class);
    assertThat(GroupFeed.of("", -1).reads()).isFalse();
  }
}
