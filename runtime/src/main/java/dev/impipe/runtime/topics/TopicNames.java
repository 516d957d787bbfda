package dev.impipe.runtime.topics;

/** The name of every pipeline topic, derived from one prefix (default {@code im.}). Injected, never hard-coded. */
public record TopicNames(
    String messages,
    String groupMembers,
    String inbox,
    String deviceCursors,
    String deliveries,
    String acks,
    String ackTimeouts,
    String delayed,
    String rejected,
    String history,
    String pushRegistrations,
    String notifications) {

  public static TopicNames withPrefix(String prefix) {
    return new TopicNames(prefix + "messages", prefix + "group-members", prefix + "inbox",
        prefix + "device-cursors", prefix + "deliveries", prefix + "acks", prefix + "ack-timeouts",
        prefix + "delayed", prefix + "rejected", prefix + "history", prefix + "push-registrations",
        prefix + "notifications");
  }
}
