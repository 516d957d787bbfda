package dev.impipe.runtime.topics;

import dev.impipe.runtime.config.ImConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Every topic of the pipeline with its partitioning and retention (README "Topics"). */
public final class TopicCatalog {

  public static final String CONVERSATION_KEYED = "conversation";
  public static final String USER_KEYED = "user";

  private static final String SEVEN_DAYS = Long.toString(Duration.ofDays(7).toMillis());
  private static final String THIRTY_DAYS = Long.toString(Duration.ofDays(30).toMillis());
  private static final String FOREVER = "-1";

  private TopicCatalog() {}

  public static List<TopicSpec> specs(TopicNames names, ImConfig config) {
    int conv = config.conversationPartitions();
    int user = config.userPartitions();
    return List.of(
        // The store timeline: offset = conversation seq, kept for history (roaming).
        new TopicSpec(names.messages(), conv, delete(FOREVER), CONVERSATION_KEYED),
        // Keyed by groupId, so it cannot be compacted (that would keep one member per group): kept whole.
        new TopicSpec(names.groupMembers(), conv, delete(FOREVER), CONVERSATION_KEYED),
        // The sync timeline: offset = user seq; entries are kept a week (a device away longer syncs what is left).
        new TopicSpec(names.inbox(), user, delete(SEVEN_DAYS), USER_KEYED),
        new TopicSpec(names.deviceCursors(), user, delete(SEVEN_DAYS), USER_KEYED),
        new TopicSpec(names.deliveries(), user, delete(SEVEN_DAYS), USER_KEYED),
        new TopicSpec(names.acks(), user, delete(SEVEN_DAYS), USER_KEYED),
        new TopicSpec(names.ackTimeouts(), user, delete(SEVEN_DAYS), USER_KEYED),
        new TopicSpec(names.delayed(), conv, delete(SEVEN_DAYS), null),
        new TopicSpec(names.rejected(), conv, delete(THIRTY_DAYS), null),
        // History as the fan-out accepted it, one key per conversation seq (HistoryKey), partitioned by conversation
        // like im.messages. Compacted, so a recall's overwrite (the body removed) replaces the original for good.
        new TopicSpec(names.history(), conv, Map.of("cleanup.policy", "compact", "retention.ms", FOREVER),
            CONVERSATION_KEYED),
        // Registrations are few and must outlive any retention: kept whole, keyed by userId (co-partitioned with the
        // inbox, so the notify topology reads a user's devices in the task of their inbox); its store keeps the newest.
        new TopicSpec(names.pushRegistrations(), user, delete(FOREVER), USER_KEYED),
        // Decisions: read by the senders within seconds; a week covers any sender outage.
        new TopicSpec(names.notifications(), user, delete(SEVEN_DAYS), USER_KEYED));
  }

  private static Map<String, String> delete(String retentionMs) {
    return Map.of("cleanup.policy", "delete", "retention.ms", retentionMs);
  }
}
