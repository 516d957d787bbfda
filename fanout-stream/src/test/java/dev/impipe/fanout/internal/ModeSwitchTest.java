package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.runtime.streams.OrderedKey;
import dev.impipe.runtime.streams.VersionedValue;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ModeSwitchTest {

  /** Switched at conversation seq 40, task clock 100; the committed rounds went through member "carol". */
  private final ModeSwitch underWay = new ModeSwitch(40, 100, 1_700_000_000_123L, 1_700_000_000_456L, true, "carol");

  @Test
  void itRoundTripsThroughItsBytesBeforeAndAfterTheFirstRound() {
    assertThat(ModeSwitch.decode(underWay.encode())).isEqualTo(underWay);
    ModeSwitch fresh = underWay.withDoneThrough(null);
    assertThat(ModeSwitch.decode(fresh.encode())).isEqualTo(fresh);
  }

  @Test
  void aValueOfAnotherVersionOrWithBytesLeftOverIsRefused() {
    byte[] bytes = underWay.encode();
    bytes[0] = 9;
    assertThatThrownBy(() -> ModeSwitch.decode(bytes)).isInstanceOf(VersionedValue.UnknownVersionException.class);
    byte[] longer = java.util.Arrays.copyOf(underWay.encode(), underWay.encode().length + 1);
    assertThatThrownBy(() -> ModeSwitch.decode(longer)).isInstanceOf(VersionedValue.MalformedValueException.class);
  }

  @Test
  void membersWhoJoinedBeforeTheSwitchArePastTheRoundsAreOwed() {
    // past "carol" in key order, joined before clock 100
    assertThat(underWay.owes("g", "dave", 99)).isTrue();
    assertThat(underWay.owes("g", "carolyn", 5)).isTrue();
    // already told by a committed round
    assertThat(underWay.owes("g", "carol", 5)).isFalse();
    assertThat(underWay.owes("g", "bob", 5)).isFalse();
    // joined at or after the switch: their JOINED entry carried the mode
    assertThat(underWay.owes("g", "dave", 100)).isFalse();
    // before the first round everyone who joined before it is owed
    assertThat(underWay.withDoneThrough(null).owes("g", "aaron", 1)).isTrue();
  }

  @Test
  void theNextRoundResumesRightAfterTheLastMemberDone() {
    byte[] resume = underWay.resumeFrom("g").get();
    assertThat(OrderedKey.compare(resume, MemberKeys.key("g", "carol").get())).isPositive();
    assertThat(OrderedKey.compare(resume, MemberKeys.key("g", "carolyn").get())).isNegative();
    assertThat(OrderedKey.compare(resume, MemberKeys.key("g", "carol\0").get())).isNegative();
    assertThat(underWay.withDoneThrough(null).resumeFrom("g")).isEqualTo(MemberKeys.groupPrefix("g"));
  }

  @Test
  void theEntryTellsTheMemberToReadTheTimelineFromTheSwitchingMessage() {
    InboxEntry entry = underWay.entryFor("g", "dave");
    assertThat(entry.getUserId()).isEqualTo("dave");
    assertThat(entry.getType()).isEqualTo(InboxEntryType.CONVERSATION_MODE);
    assertThat(entry.getConversationId()).isEqualTo("g");
    assertThat(entry.getConversationSeq()).isEqualTo(40);
    assertThat(entry.getTimelineFromSeq()).isEqualTo(40);
    assertThat(entry.getReadDiffusion()).isTrue();
    assertThat(entry.getTimestamp()).isEqualTo(Instant.ofEpochMilli(1_700_000_000_123L));
  }
}
