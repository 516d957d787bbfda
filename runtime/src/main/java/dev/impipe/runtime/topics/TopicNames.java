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

  /**
   * The names of inbox generation {@code generation} (ADR 0014): generation 0 is these names; generation g >= 1
   * suffixes the user-keyed family co-partitioned with the inbox ({@code im.inbox.g1}, {@code im.device-cursors.g1},
   * ...). Conversation-keyed topics and {@code im.rejected} are shared by every generation.
   */
  public TopicNames inGeneration(int generation) {
    if (generation < 0) {
      throw new IllegalArgumentException("an inbox generation is >= 0, not " + generation);
    }
    if (generation == 0) {
      return this;
    }
    String g = ".g" + generation;
    return new TopicNames(messages, groupMembers, inbox + g, deviceCursors + g, deliveries + g, acks + g,
        ackTimeouts + g, delayed, rejected, history, pushRegistrations + g, notifications + g);
  }
}
