package dev.impipe.notify.decide;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.Notification;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.runtime.domain.Ids;
import java.time.Instant;
import java.util.Optional;

/** Which inbox entries lead to a notification, and what a due burst turns into: pure functions. */
public final class NotifyRules {

  public static final String DIRECT = "DIRECT";
  public static final String GROUP = "GROUP";

  private NotifyRules() {}

  /**
   * What a due burst turns into.
   *
   * @param notification the notification to write, if any
   * @param next the burst to keep (its due entry follows from it), or null to remove it
   */
  public record Decision(Optional<Notification> notification, PendingBurst next) {}

  /**
   * Whether {@code e}, an entry of the inbox of {@code key}, is a message that may notify its user's devices: a
   * MESSAGE of someone else, in a user's own inbox (a large group's timeline {@code #groupId} has no user).
   */
  public static boolean notifiable(String key, InboxEntry e) {
    return e.getType() == InboxEntryType.MESSAGE && !Ids.isGroupTimeline(key) && !key.equals(e.getSenderId());
  }

  /** Whether a device with registration {@code r} can be notified: registered, with a provider this build knows. */
  public static boolean deliverable(PushRegistration r) {
    return r != null && !r.getRemoved() && r.getProvider() != null && r.getProvider() != PushProvider.UNKNOWN;
  }

  /** The first {@code chars} characters (code points) of {@code body}; null when previews are off or no body. */
  public static String preview(String body, int chars) {
    if (body == null || chars <= 0) {
      return null;
    }
    return body.substring(0, body.offsetByCodePoints(0, Math.min(chars, body.codePointCount(0, body.length()))));
  }

  /** Deterministic: the same burst decided again (a replay) gets the same id, the providers' collapse key. */
  public static String notificationId(NotifyKeys.Burst target, long firstSeq) {
    return target.userId() + ":" + target.deviceId() + ":" + target.conversationId() + ":" + firstSeq;
  }

  public static String conversationType(String conversationId) {
    return Ids.isDirect(conversationId) ? DIRECT : GROUP;
  }

  /**
   * The decision on {@code burst} of {@code target} when its due entry comes at {@code now}: nothing for a device no
   * longer registered (the burst goes) or a conversation muted now (its messages go, the coalescing window stays),
   * nothing and the burst goes when only the window was left; otherwise one notification, and the window starts.
   *
   * @param unreadTotal the user's badge, null if the list has none (0)
   */
  public static Decision decide(NotifyKeys.Burst target, PendingBurst burst, PushRegistration registration,
      boolean muted, Long unreadTotal, long now) {
    if (!deliverable(registration) || burst.isEmpty()) {
      return new Decision(Optional.empty(), null);
    }
    if (muted) {
      return new Decision(Optional.empty(), burst.cleared());
    }
    return new Decision(Optional.of(notification(target, burst, registration, unreadTotal, now)),
        burst.notified(now));
  }

  /** The notification of a non-empty {@code burst} to the device of {@code registration}. */
  public static Notification notification(NotifyKeys.Burst target, PendingBurst burst, PushRegistration registration,
      Long unreadTotal, long now) {
    return Notification.newBuilder()
        .setNotificationId(notificationId(target, burst.firstSeq()))
        .setUserId(target.userId())
        .setDeviceId(target.deviceId())
        .setConversationId(target.conversationId())
        .setConversationType(conversationType(target.conversationId()))
        .setSenderId(burst.senderId())
        .setPreview(burst.preview())
        .setSeq(burst.newestSeq())
        .setCount((int) Math.min(Integer.MAX_VALUE, burst.count()))
        .setUnreadTotal(unreadTotal == null ? 0L : unreadTotal)
        .setEntryAt(Instant.ofEpochMilli(burst.firstEntryAt()))
        .setDecidedAt(Instant.ofEpochMilli(now))
        .setRegistrationId(registration.getRegistrationId())
        .setProvider(registration.getProvider().name())
        .setEndpoint(registration.getEndpoint())
        .setP256dh(registration.getP256dh())
        .setAuth(registration.getAuth())
        .setToken(registration.getToken())
        .setSandbox(registration.getSandbox())
        .build();
  }
}
