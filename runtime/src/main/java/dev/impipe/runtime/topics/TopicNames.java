package dev.impipe.runtime.topics;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

  private static final Pattern GENERATION_SUFFIX = Pattern.compile("\\.g(\\d+)$");

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

  /** The inbox generation these names belong to ({@link #inGeneration}): 0 unless the inbox is suffixed {@code .g<g>}. */
  public int generation() {
    Matcher m = GENERATION_SUFFIX.matcher(inbox);
    return m.find() ? Integer.parseInt(m.group(1)) : 0;
  }
}
