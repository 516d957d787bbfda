package dev.impipe.notify.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.Notification;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class NotifyRulesTest {

  private static final NotifyKeys.Burst TARGET = new NotifyKeys.Burst("bob", "phone", "d:alice:bob");

  private static InboxEntry entry(InboxEntryType type, String user, String sender) {
    return InboxEntry.newBuilder().setUserId(user).setType(type).setConversationId("d:alice:bob")
        .setConversationSeq(3).setSenderId(sender).setTimestamp(Instant.ofEpochMilli(1)).build();
  }

  private static PushRegistration registration(PushProvider provider, boolean removed) {
    return PushRegistration.newBuilder().setUserId("bob").setDeviceId("phone").setRegistrationId("r1")
        .setProvider(provider).setRemoved(removed).setEndpoint("https://push.example/x").setP256dh("key")
        .setAuth("auth").setToken("tok").setSandbox(true).setAt(Instant.ofEpochMilli(0)).build();
  }

  private static PendingBurst burst() {
    return PendingBurst.empty()
        .add(new PendingBurst.Message(7, 30, "m7", "alice", 1_000), "hi", 10)
        .add(new PendingBurst.Message(9, 31, "m9", "carol", 2_000), "there", 10);
  }

  @Test
  void onlyOthersMessagesInAUsersOwnInboxNotify() {
    assertThat(NotifyRules.notifiable("bob", entry(InboxEntryType.MESSAGE, "bob", "alice"))).isTrue();
    assertThat(NotifyRules.notifiable("bob", entry(InboxEntryType.MESSAGE, "bob", null))).isTrue();
    assertThat(NotifyRules.notifiable("bob", entry(InboxEntryType.MESSAGE, "bob", "bob"))).isFalse();
    assertThat(NotifyRules.notifiable("#g1", entry(InboxEntryType.MESSAGE, "#g1", "alice"))).isFalse();
    for (InboxEntryType other : InboxEntryType.values()) {
      if (other != InboxEntryType.MESSAGE) {
        assertThat(NotifyRules.notifiable("bob", entry(other, "bob", "alice"))).as(other.name()).isFalse();
      }
    }
  }

  @Test
  void aRegistrationIsDeliverableWithAKnownProviderUntilRemoved() {
    assertThat(NotifyRules.deliverable(registration(PushProvider.WEBPUSH, false))).isTrue();
    assertThat(NotifyRules.deliverable(registration(PushProvider.WEBHOOK, false))).isTrue();
    assertThat(NotifyRules.deliverable(registration(PushProvider.UNKNOWN, false))).isFalse();
    assertThat(NotifyRules.deliverable(registration(PushProvider.FCM, true))).isFalse();
    assertThat(NotifyRules.deliverable(null)).isFalse();
  }

  @Test
  void thePreviewIsTheFirstCharactersOfTheBody() {
    assertThat(NotifyRules.preview("hello world", 5)).isEqualTo("hello");
    assertThat(NotifyRules.preview("hello", 5)).isEqualTo("hello");
    assertThat(NotifyRules.preview("hell", 5)).isEqualTo("hell");
    assertThat(NotifyRules.preview("hello", 0)).isNull();
    assertThat(NotifyRules.preview(null, 5)).isNull();
    // characters, not UTF-16 units: a surrogate pair is never cut in half
    assertThat(NotifyRules.preview("a\uD83D\uDE00b", 2)).isEqualTo("a\uD83D\uDE00");
  }

  @Test
  void idsAndConversationTypes() {
    assertThat(NotifyRules.notificationId(TARGET, 7)).isEqualTo("bob:phone:d:alice:bob:7");
    assertThat(NotifyRules.conversationType("d:alice:bob")).isEqualTo("DIRECT");
    assertThat(NotifyRules.conversationType("team")).isEqualTo("GROUP");
  }

  @Test
  void aDueBurstOfARegisteredDeviceIsOneNotificationAndTheWindowStarts() {
    NotifyRules.Decision d = NotifyRules.decide(TARGET, burst(), registration(PushProvider.WEBPUSH, false), false,
        4L, 12_000);
    Notification expected = Notification.newBuilder()
        .setNotificationId("bob:phone:d:alice:bob:7").setUserId("bob").setDeviceId("phone")
        .setConversationId("d:alice:bob").setConversationType("DIRECT").setSenderId("carol").setPreview("there")
        .setSeq(9).setCount(2).setUnreadTotal(4L).setEntryAt(Instant.ofEpochMilli(1_000))
        .setDecidedAt(Instant.ofEpochMilli(12_000)).setRegistrationId("r1").setProvider("WEBPUSH")
        .setEndpoint("https://push.example/x").setP256dh("key").setAuth("auth").setToken("tok").setSandbox(true)
        .build();
    assertThat(d.notification()).contains(expected);
    assertThat(d.next()).isEqualTo(burst().notified(12_000));
  }

  @Test
  void noBadgeYetIsZero() {
    NotifyRules.Decision d = NotifyRules.decide(TARGET, burst(), registration(PushProvider.FCM, false), false, null,
        12_000);
    assertThat(d.notification().orElseThrow().getUnreadTotal()).isZero();
  }

  @Test
  void mutedNowClearsTheMessagesAndKeepsTheWindow() {
    PendingBurst b = burst().notified(500).add(new PendingBurst.Message(11, 32, "m11", "a", 3_000), "x", 10);
    NotifyRules.Decision d = NotifyRules.decide(TARGET, b, registration(PushProvider.APNS, false), true, 1L,
        13_000);
    assertThat(d.notification()).isEmpty();
    assertThat(d.next()).isEqualTo(b.cleared());
  }

  @Test
  void aDeviceNoLongerRegisteredOrAnEmptyBurstGetsNothingAndTheBurstGoes() {
    assertThat(NotifyRules.decide(TARGET, burst(), null, false, 1L, 13_000))
        .isEqualTo(new NotifyRules.Decision(java.util.Optional.empty(), null));
    assertThat(NotifyRules.decide(TARGET, burst(), registration(PushProvider.UNKNOWN, false), false, 1L, 13_000)
        .next()).isNull();
    assertThat(NotifyRules.decide(TARGET, PendingBurst.empty().notified(1), registration(PushProvider.FCM, false),
        false, 1L, 61_000)).isEqualTo(new NotifyRules.Decision(java.util.Optional.empty(), null));
  }
}
