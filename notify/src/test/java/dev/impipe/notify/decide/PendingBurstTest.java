package dev.impipe.notify.decide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.notify.decide.PendingBurst.Message;
import dev.impipe.notify.decide.PendingBurst.Untracked;
import java.util.List;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class PendingBurstTest {

  private static final long AFTER = 10_000;
  private static final long COALESCE = 60_000;

  private static Message msg(long seq, long conversationSeq, long at) {
    return new Message(seq, conversationSeq, "m" + seq, "s" + seq, at);
  }

  private static PendingBurst burstOf(int tracked, Message... messages) {
    PendingBurst b = PendingBurst.empty();
    for (Message m : messages) {
      b = b.add(m, "preview " + m.seq(), tracked);
    }
    return b;
  }

  @Test
  void anEmptyBurstHasNothingToWaitFor() {
    PendingBurst b = PendingBurst.empty();
    assertThat(b.isEmpty()).isTrue();
    assertThat(b.count()).isZero();
    assertThat(b.senderId()).isNull();
    assertThat(b.newestSeq()).isEqualTo(-1);
    assertThat(b.nextDue(AFTER, COALESCE, 0)).isEqualTo(PendingBurst.NONE);
  }

  @Test
  void messagesAddUpOldestFirstAndTheNewestGivesSenderAndPreview() {
    // Given three messages at 1 s, 2 s, 3 s
    PendingBurst b = burstOf(10, msg(5, 50, 1_000), msg(7, 51, 2_000), msg(9, 52, 3_000));
    // Then the burst covers 3, from seq 5 to 9, due IM_NOTIFY_AFTER after the oldest
    assertThat(b.count()).isEqualTo(3);
    assertThat(b.firstSeq()).isEqualTo(5);
    assertThat(b.firstEntryAt()).isEqualTo(1_000);
    assertThat(b.newestSeq()).isEqualTo(9);
    assertThat(b.senderId()).isEqualTo("s9");
    assertThat(b.preview()).isEqualTo("preview 9");
    assertThat(b.nextDue(AFTER, COALESCE, 0)).isEqualTo(11_000);
  }

  @Test
  void aReplayedMessageChangesNothing() {
    PendingBurst b = burstOf(10, msg(5, 50, 1_000), msg(7, 51, 2_000));
    assertThat(b.add(msg(7, 51, 2_000), "again", 10)).isSameAs(b);
    assertThat(b.add(msg(6, 51, 2_000), "older", 10)).isSameAs(b);
  }

  @Test
  void beyondTheTrackedOnesTheOldestAreCountedOnly() {
    // Given at most 2 tracked, and 4 messages
    PendingBurst b = burstOf(2, msg(1, 11, 100), msg(2, 12, 200), msg(3, 13, 300), msg(4, 14, 400));
    // Then 2 are tracked, 2 counted, and the oldest still names the burst
    assertThat(b.messages()).extracting(Message::seq).containsExactly(3L, 4L);
    assertThat(b.untracked()).isEqualTo(new Untracked(2, 1, 100, 2, 12));
    assertThat(b.count()).isEqualTo(4);
    assertThat(b.firstSeq()).isEqualTo(1);
    assertThat(b.firstEntryAt()).isEqualTo(100);
    assertThat(b.nextDue(AFTER, COALESCE, 0)).isEqualTo(10_100);
  }

  @Test
  void aTrackedLimitBelowOneStillTracksTheNewest() {
    PendingBurst b = burstOf(0, msg(1, 11, 100), msg(2, 12, 200));
    assertThat(b.messages()).extracting(Message::seq).containsExactly(2L);
    assertThat(b.count()).isEqualTo(2);
  }

  @Test
  void receivingDropsEverythingUpToTheReceivedSeq() {
    PendingBurst b = burstOf(10, msg(5, 50, 1_000), msg(7, 51, 2_000), msg(9, 52, 3_000));
    // When the device received up to 7
    PendingBurst after = b.receivedUpTo(7);
    // Then 9 is left, due after its own entry
    assertThat(after.messages()).extracting(Message::seq).containsExactly(9L);
    assertThat(after.preview()).isEqualTo("preview 9");
    assertThat(after.nextDue(AFTER, COALESCE, 0)).isEqualTo(13_000);
    // and receiving what was received changes nothing
    assertThat(after.receivedUpTo(7)).isSameAs(after);
    assertThat(b.receivedUpTo(4)).isSameAs(b);
    assertThat(b.receivedUpTo(9).isEmpty()).isTrue();
  }

  @Test
  void untrackedOnesGoOnlyOnceTheirNewestIsReceivedOrRead() {
    PendingBurst b = burstOf(1, msg(1, 11, 100), msg(2, 12, 200), msg(3, 13, 300));
    assertThat(b.receivedUpTo(1).count()).isEqualTo(3);
    assertThat(b.receivedUpTo(2).count()).isEqualTo(1);
    assertThat(b.receivedUpTo(2).untracked()).isEqualTo(Untracked.NONE);
    assertThat(b.readUpTo(11).count()).isEqualTo(3);
    assertThat(b.readUpTo(12).count()).isEqualTo(1);
    assertThat(b.readUpTo(12).firstSeq()).isEqualTo(3);
  }

  @Test
  void readingDropsByConversationSeq() {
    PendingBurst b = burstOf(10, msg(5, 50, 1_000), msg(7, 51, 2_000), msg(9, 52, 3_000));
    assertThat(b.readUpTo(51).messages()).extracting(Message::seq).containsExactly(9L);
    assertThat(b.readUpTo(49)).isSameAs(b);
    assertThat(b.readUpTo(52).isEmpty()).isTrue();
  }

  @Test
  void aRecallDropsTheMessageAndTheNewestsPreviewGoesWithIt() {
    PendingBurst b = burstOf(10, msg(5, 50, 1_000), msg(7, 51, 2_000));
    // When the older one is recalled: the preview stays
    PendingBurst older = b.recalled("m5");
    assertThat(older.messages()).extracting(Message::seq).containsExactly(7L);
    assertThat(older.preview()).isEqualTo("preview 7");
    // When the newest is recalled: its body is never shown; the sender is the one of the newest left
    PendingBurst newest = b.recalled("m7");
    assertThat(newest.messages()).extracting(Message::seq).containsExactly(5L);
    assertThat(newest.preview()).isNull();
    assertThat(newest.senderId()).isEqualTo("s5");
    assertThat(b.recalled("unknown")).isSameAs(b);
  }

  @Test
  void aRecallOfAnUntrackedMessageStillCountsIt() {
    PendingBurst b = burstOf(1, msg(1, 11, 100), msg(2, 12, 200));
    assertThat(b.recalled("m1")).isSameAs(b);
    PendingBurst onlyUntracked = b.recalled("m2");
    assertThat(onlyUntracked.count()).isEqualTo(1);
    assertThat(onlyUntracked.newestSeq()).isEqualTo(1);
    assertThat(onlyUntracked.senderId()).isNull();
    assertThat(onlyUntracked.preview()).isNull();
  }

  @Test
  void afterANotificationTheCoalescingWindowHoldsTheNextOneBack() {
    // Given a burst notified at 11 s
    PendingBurst notified = burstOf(10, msg(5, 50, 1_000)).notified(11_000);
    assertThat(notified.isEmpty()).isTrue();
    assertThat(notified.preview()).isNull();
    assertThat(notified.lastNotifiedAt()).isEqualTo(11_000);
    // Then with nothing new it waits for the end of the window (71 s) only while the window is open
    assertThat(notified.nextDue(AFTER, COALESCE, 11_000)).isEqualTo(71_000);
    assertThat(notified.nextDue(AFTER, COALESCE, 70_999)).isEqualTo(71_000);
    assertThat(notified.nextDue(AFTER, COALESCE, 71_000)).isEqualTo(PendingBurst.NONE);
    // A message at 20 s waits for the window's end; one at 65 s for its own IM_NOTIFY_AFTER
    assertThat(notified.add(msg(8, 51, 20_000), null, 10).nextDue(AFTER, COALESCE, 20_000)).isEqualTo(71_000);
    assertThat(notified.add(msg(8, 51, 65_000), null, 10).nextDue(AFTER, COALESCE, 65_000)).isEqualTo(75_000);
  }

  @Test
  void clearingKeepsTheWindowOnly() {
    PendingBurst b = burstOf(1, msg(1, 11, 100), msg(2, 12, 200)).notified(5).add(msg(3, 13, 300), "p", 1)
        .cleared();
    assertThat(b.isEmpty()).isTrue();
    assertThat(b.untracked()).isEqualTo(Untracked.NONE);
    assertThat(b.preview()).isNull();
    assertThat(b.lastNotifiedAt()).isEqualTo(5);
  }

  @Test
  void encodesAndDecodesEveryField() {
    PendingBurst b = burstOf(2, msg(1, 11, 100), msg(2, 12, 200),
        new Message(3, 13, null, "s3", 300)).notified(250).add(new Message(4, 14, "m4", null, 400), null, 2)
        .add(msg(5, 15, 500), "p\u00e9", 2).withDue(12_345);
    PendingBurst decoded = PendingBurst.decode(b.encode());
    assertThat(decoded).isEqualTo(b);
    assertThat(PendingBurst.decode(PendingBurst.empty().encode())).isEqualTo(PendingBurst.empty());
  }

  @Test
  void bytesThatAreNotABurstDoNotDecode() {
    assertThatThrownBy(() -> PendingBurst.decode(new byte[] {9, 9})).isInstanceOf(SerializationException.class);
    byte[] good = burstOf(10, msg(1, 11, 100)).encode();
    byte[] longer = java.util.Arrays.copyOf(good, good.length + 1);
    assertThatThrownBy(() -> PendingBurst.decode(longer)).isInstanceOf(SerializationException.class);
    byte[] shorter = java.util.Arrays.copyOf(good, good.length - 1);
    assertThatThrownBy(() -> PendingBurst.decode(shorter)).isInstanceOf(SerializationException.class);
    // a message count the bytes cannot hold, or a negative one
    byte[] header = PendingBurst.empty().encode();
    header[header.length - 4] = 0x7F;
    assertThatThrownBy(() -> PendingBurst.decode(header)).isInstanceOf(SerializationException.class);
    header[header.length - 4] = (byte) 0xFF;
    assertThatThrownBy(() -> PendingBurst.decode(header)).isInstanceOf(SerializationException.class);
  }

  @Test
  void theMessagesListIsACopy() {
    java.util.ArrayList<Message> list = new java.util.ArrayList<>(List.of(msg(1, 1, 1)));
    PendingBurst b = new PendingBurst(list, Untracked.NONE, null, PendingBurst.NONE, PendingBurst.NONE);
    list.clear();
    assertThat(b.count()).isEqualTo(1);
  }
}
