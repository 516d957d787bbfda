package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.runtime.domain.Ids;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The large groups one connection listens to ({@link GroupFeed} per group, see {@link Connection}), and the
 * timeline offsets its next backlog page must wait for: a group listened to since the last page was asked for
 * (the store must hold what the reader passed before the connection listened), or one whose record the reader
 * could not decode. Not thread-safe (the connection's lock guards it).
 */
final class GroupListening {

  private static final Logger LOG = LoggerFactory.getLogger(GroupListening.class);

  /** Where a connection subscribes to a group's timeline on the gateway's reader. */
  interface Subscriptions {
    void subscribe(String group);

    void unsubscribe(String group);

    /** The offset of the last record of the group's timeline partition the reader passed (-1: none). */
    long seen(String group);
  }

  private final Subscriptions subscriptions;
  private final Supplier<String> owner;
  private final Map<String, GroupFeed> feeds = new HashMap<>();
  private final TreeMap<String, Long> minSeqs = new TreeMap<>();

  GroupListening(Subscriptions subscriptions, Supplier<String> owner) {
    this.subscriptions = subscriptions;
    this.owner = owner;
  }

  /** The feed of {@code group}, or null when the connection does not listen to it. */
  GroupFeed feed(String group) {
    return feeds.get(group);
  }

  /** A JOINED / LEFT / MODE entry of a group the user reads, or starts to read, from its timeline. */
  boolean interrupts(InboxEntry e) {
    return isMembership(e.getType()) && e.getTimelineFromSeq() != null && !Ids.isDirect(e.getConversationId())
        && (Boolean.TRUE.equals(e.getReadDiffusion()) || feeds.containsKey(e.getConversationId()));
  }

  static boolean isMembership(InboxEntryType type) {
    return type == InboxEntryType.CONVERSATION_JOINED || type == InboxEntryType.CONVERSATION_LEFT
        || type == InboxEntryType.CONVERSATION_MODE;
  }

  /** Listens to {@code group}, keeping its feed if it has one (an empty one otherwise). */
  void listenKeeping(String group) {
    listen(group, feeds.containsKey(group) ? feeds.get(group) : GroupFeed.none());
  }

  private void listen(String group, GroupFeed feed) {
    if (feeds.put(group, feed) == null) {
      subscriptions.subscribe(group);
    }
    // After subscribing: from here on the reader offers this group's entries; the store holds those it passed.
    minSeqs.put(group, subscriptions.seen(group));
  }

  void stop(String group) {
    if (feeds.remove(group) != null) {
      subscriptions.unsubscribe(group);
    }
  }

  void stopAll() {
    new ArrayList<>(feeds.keySet()).forEach(this::stop);
  }

  /** The next page must wait until {@code group}'s timeline holds {@code offset}. */
  void waitFor(String group, long offset) {
    minSeqs.merge(group, offset, Math::max);
  }

  /** Whether a page must be read for the offsets to wait for. */
  boolean waiting() {
    return !minSeqs.isEmpty();
  }

  /** The offsets the next page waits for (by group id), handed over once. */
  Map<String, Long> takeMinSeqs() {
    Map<String, Long> taken = new TreeMap<>(minSeqs);
    minSeqs.clear();
    return taken;
  }

  /**
   * The user's large groups as the store answered this page: listens to new ones (the next page then reads what
   * the reader passed in them before), drops those the user no longer reads at all.
   */
  void readLargeGroups(JsonNode largeGroups) {
    Map<String, JsonNode> now = new HashMap<>();
    largeGroups.forEach(g -> now.put(g.path("groupId").asText(""), g));
    for (String group : new ArrayList<>(feeds.keySet())) {
      if (!now.containsKey(group)) {
        stop(group);
      }
    }
    now.forEach((group, g) -> {
      String ranges = g.path("ranges").asText("");
      long through = g.path("through").asLong(-1);
      try {
        GroupFeed known = feeds.get(group);
        if (known == null) {
          listen(group, GroupFeed.of(ranges, through));
        } else {
          known.replace(ranges, through);
        }
      } catch (IllegalArgumentException e) {
        LOG.warn("unreadable intervals of group {} for {}: {}", group, owner.get(), e.toString());
      }
    });
  }

  /** A membership entry on a page, newer than the intervals the page came with: applied to the group's feed. */
  void applyMembership(long seq, JsonNode entry) {
    InboxEntryType type;
    try {
      type = InboxEntryType.valueOf(entry.path("type").asText(""));
    } catch (IllegalArgumentException e) {
      return;
    }
    String group = entry.path("conversationId").asText("");
    if (!isMembership(type) || !entry.path("timelineFromSeq").canConvertToLong() || Ids.isDirect(group)) {
      return;
    }
    boolean readDiffusion = entry.path("readDiffusion").asBoolean(false);
    GroupFeed feed = feeds.get(group);
    if (feed == null && !readDiffusion) {
      return;
    }
    if (feed == null) {
      feed = GroupFeed.none();
      listen(group, feed);
    }
    feed.apply(seq, type, entry.get("timelineFromSeq").asLong(), readDiffusion);
  }
}
