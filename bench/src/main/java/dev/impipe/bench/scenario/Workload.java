package dev.impipe.bench.scenario;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.runtime.domain.Ids;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * A chat population: users {@code u0..}, groups whose sizes are mostly small (3-10 members: 90%; 11-100: 10%)
 * plus a few large ones (thousands of members), and a message stream that is half direct, half group (a random
 * group, sent by one of its members). Deterministic for a seed.
 */
public final class Workload {

  private static final String BODY = "x".repeat(64);

  private final int users;
  private final int[][] groups;
  private final SplittableRandom random;
  private final String run;
  private long sent;

  /**
   * @param users population size
   * @param groupCount number of groups
   * @param largeGroups how many of them are large
   * @param largeSize members of a large group (capped at the population)
   */
  public Workload(int users, int groupCount, int largeGroups, int largeSize, long seed, String run) {
    this.users = users;
    this.random = new SplittableRandom(seed);
    this.run = run;
    this.groups = new int[groupCount][];
    int[] all = new int[users];
    for (int i = 0; i < users; i++) {
      all[i] = i;
    }
    for (int g = 0; g < groupCount; g++) {
      int size;
      if (g < largeGroups) {
        size = Math.min(users, largeSize / 2 + random.nextInt(largeSize / 2 + 1));
      } else if (random.nextInt(10) == 0) {
        size = 11 + random.nextInt(90);
      } else {
        size = 3 + random.nextInt(8);
      }
      size = Math.min(size, users);
      // Partial Fisher-Yates: the first `size` of a shuffled population, without replacement.
      int[] members = new int[size];
      for (int i = 0; i < size; i++) {
        int j = i + random.nextInt(users - i);
        int t = all[i];
        all[i] = all[j];
        all[j] = t;
        members[i] = all[i];
      }
      groups[g] = members;
    }
  }

  public int users() {
    return users;
  }

  public int groupCount() {
    return groups.length;
  }

  public static String user(int i) {
    return "u" + i;
  }

  public static String group(int g) {
    return "g" + g;
  }

  /** Every JOIN of the population, in group order. */
  public long memberships() {
    long n = 0;
    for (int[] g : groups) {
      n += g.length;
    }
    return n;
  }

  public int largestGroup() {
    int max = 0;
    for (int[] g : groups) {
      max = Math.max(max, g.length);
    }
    return max;
  }

  /** Calls {@code sink} with every JOIN. */
  public void joins(Instant at, java.util.function.BiConsumer<String, MembershipChange> sink) {
    for (int g = 0; g < groups.length; g++) {
      for (int u : groups[g]) {
        sink.accept(group(g), new MembershipChange(group(g), user(u), MembershipOp.JOIN, at, null, null));
      }
    }
  }

  /** Mean inbox entries of one message: 2 for direct, the group size for a group, half and half. */
  public double meanEntriesPerMessage() {
    return (2.0 + meanGroupSize()) / 2;
  }

  public double meanGroupSize() {
    return (double) memberships() / groups.length;
  }

  /** A generated message and the number of inbox entries fan-out writes for it. */
  public record Message(ChatMessage value, int recipients) {}

  /** The next message: even ones direct, odd ones to a group. */
  public Message next(Instant sentAt) {
    long n = sent++;
    String clientMsgId = run + "-" + n;
    ChatMessage.Builder b = ChatMessage.newBuilder().setAttributes(Map.of()).setType(MessageType.MESSAGE)
        .setMessageId("m" + clientMsgId).setClientMsgId(clientMsgId).setBody(BODY).setSentAt(sentAt);
    if ((n & 1) == 0) {
      String from = user(random.nextInt(users));
      String to;
      do {
        to = user(random.nextInt(users));
      } while (to.equals(from));
      return new Message(b.setConversationType(ConversationType.DIRECT).setConversationId(Ids.direct(from, to))
          .setSenderId(from).setRecipientId(to).build(), 2);
    }
    int g = random.nextInt(groups.length);
    int[] members = groups[g];
    String from = user(members[random.nextInt(members.length)]);
    return new Message(b.setConversationType(ConversationType.GROUP).setConversationId(group(g))
        .setGroupId(group(g)).setSenderId(from).build(), members.length);
  }

  /** Distinct users with at least one membership (for sanity checks). */
  Set<Integer> members() {
    Set<Integer> s = new HashSet<>();
    for (int[] g : groups) {
      for (int u : g) {
        s.add(u);
      }
    }
    return s;
  }
}
