package dev.impipe.notify.provider;

import dev.impipe.avro.Notification;
import java.time.Instant;

/** Notification records for the provider and sender tests. */
public final class TestNotifications {

  private TestNotifications() {}

  /** A WEBHOOK notification of bob's phone about a direct conversation with alice, seq 7, count 2. */
  public static Notification.Builder base() {
    return Notification.newBuilder().setNotificationId("bob:phone:d:alice:bob:5").setUserId("bob")
        .setDeviceId("phone").setConversationId("d:alice:bob").setConversationType("DIRECT").setSenderId("alice")
        .setPreview("hello").setSeq(7).setCount(2).setUnreadTotal(3L).setEntryAt(Instant.ofEpochMilli(1_000))
        .setDecidedAt(Instant.ofEpochMilli(11_000)).setRegistrationId("reg-1").setProvider("WEBHOOK");
  }

  /** A Web Push notification to {@code endpoint} with the RFC 8291 test vector's user agent keys. */
  public static Notification webPush(String endpoint) {
    return base().setProvider(WebPushProvider.NAME).setEndpoint(endpoint)
        .setP256dh(WebPushEncryptionTest.UA_PUBLIC).setAuth(WebPushEncryptionTest.AUTH).build();
  }
}
