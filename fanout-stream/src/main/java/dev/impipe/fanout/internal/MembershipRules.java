package dev.impipe.fanout.internal;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.streams.RejectedRecord;
import java.util.function.BiConsumer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Applies a validated JOIN / LEAVE to the membership and group stores and emits the CONVERSATION_JOINED / LEFT entry
 * (and the LEFT marker of a large group's timeline). A change with an {@code actorId} must obey the group rules (see
 * {@link #refusal}); a refused one emits the actor's REJECTED entry and throws. A JOIN beyond the group's size cap
 * is refused whoever makes it ({@code GROUP_FULL}). Shared by the control records of {@code im.messages} (ordered
 * with the messages) and the legacy {@code im.group-members} input.
 */
final class MembershipRules {

  private final FanoutMetrics metrics;
  private final KeyValueStore<Bytes, byte[]> members;
  private final KeyValueStore<String, byte[]> groups;
  private final TaskClock clock;
  private final WindowStore<Bytes, byte[]> pastMembers;
  private final ModeSwitchRounds switches;
  private final int maxMembers;

  MembershipRules(FanoutMetrics metrics, KeyValueStore<Bytes, byte[]> members, KeyValueStore<String, byte[]> groups,
      TaskClock clock, WindowStore<Bytes, byte[]> pastMembers, ModeSwitchRounds switches, int maxMembers) {
    this.metrics = metrics;
    this.members = members;
    this.groups = groups;
    this.clock = clock;
    this.pastMembers = pastMembers;
    this.switches = switches;
    this.maxMembers = maxMembers;
  }

  /**
   * Applies {@code change}; {@code seq} is the conversation seq of a control record (-1 for the legacy topic), echoed
   * in a REJECTED entry; {@code timestamp} the record's. Entries go to {@code out} as (user key, entry). Returns
   * whether membership changed (false for a repeated JOIN or LEAVE).
   *
   * @throws RejectedRecord when the actor may not make this change (after emitting the REJECTED entry)
   */
  boolean apply(MembershipChange change, long seq, long timestamp, BiConsumer<String, InboxEntry> out) {
    Bytes key = MemberKeys.key(change.getGroupId(), change.getUserId());
    boolean isMember = members.get(key) != null;
    boolean join = change.getOp() == MembershipOp.JOIN;
    GroupState group = withAdmin(change.getGroupId(), GroupState.decode(groups.get(change.getGroupId())));
    Refusal refusal = change.getActorId() == null ? null : refusal(change, group, isMember);
    if (refusal == null && join && !isMember && group.members() >= maxMembers) {
      refusal = new Refusal("GROUP_FULL", "group " + change.getGroupId() + " has " + group.members()
          + " members, the most a group may have (IM_GROUP_MAX_MEMBERS): " + change.getUserId() + " cannot join");
    }
    if (refusal != null) {
      if (change.getActorId() != null) {
        // The actor's devices learn of it; then the dead letter (same transaction, see RejectedRecord).
        out.accept(change.getActorId(), refusal.entryFor(change, seq));
        metrics.inboxEntriesWritten(1);
      }
      throw reject(refusal.code(), refusal.reason());
    }
    if (join == isMember) {
      return false; // already in that state: a repeated JOIN or LEAVE changes nothing
    }
    long count = group.members() + (join ? 1 : -1);
    if (join) {
      members.put(key, MemberKeys.joinedAt(clock.tick()));
      // The first JOIN creates the group (again, once it was empty) and makes that user its admin.
      group = group.members() == 0 ? group.withAdmin(change.getUserId()) : group;
    } else {
      long joinedAt = MemberKeys.joinedAt(members.get(key));
      if (group.large()) {
        // A switch to read diffusion still being written owes this member its entry: first, then the LEFT below.
        switches.beforeLeave(change.getGroupId(), change.getUserId(), joinedAt, out);
      }
      // Remembered for the recall window: a recall must still reach this user if they come back (see PAST_MEMBERS).
      pastMembers.put(key, MemberKeys.period(joinedAt, clock.tick()), timestamp);
      members.delete(key);
      if (count == 0) {
        group = group.withAdmin(null);
      } else if (change.getUserId().equals(group.admin())) {
        group = group.withAdmin(earliestMember(change.getGroupId())); // the admin left: the earliest remaining
      }
    }
    if (count == 0) {
      // The last member left: the group's entry goes (an empty group would otherwise stay forever). A re-created
      // group's first join starts after every record processed (TaskClock#joinBoundary); a last seq kept by an
      // earlier build in this entry is folded into the task's boundary floor.
      clock.floor(group.lastSeq());
      groups.delete(change.getGroupId());
    } else {
      groups.put(change.getGroupId(), group.withMembers(count).encode());
    }
    metrics.membershipChanges().increment();
    InboxEntry entry = InboxEntry.newBuilder()
        .setUserId(change.getUserId())
        .setType(join ? InboxEntryType.CONVERSATION_JOINED : InboxEntryType.CONVERSATION_LEFT)
        .setConversationId(change.getGroupId())
        .setConversationSeq(-1L)
        .setTimestamp(change.getAt())
        // Takes effect right after the last record of the conversation processed; a member reads its history from
        // there (inbox-store), and in a large group its timeline.
        .setTimelineFromSeq(clock.joinBoundary(group))
        .setReadDiffusion(group.large())
        .build();
    out.accept(change.getUserId(), entry);
    metrics.inboxEntriesWritten(1);
    if (!join && group.large()) {
      // Also in the group's own timeline, in order with its messages: a sync that reads the timeline before the
      // member's own LEFT has been applied (another partition) still stops at it, so nothing sent after the leave
      // is shown to the leaver.
      String timeline = Ids.groupTimeline(change.getGroupId());
      out.accept(timeline, InboxEntry.newBuilder(entry).setUserId(timeline).setSenderId(change.getUserId())
          .setConversationSeq(entry.getTimelineFromSeq()).build());
      metrics.inboxEntriesWritten(1);
    }
    return true;
  }

  /**
   * Why {@code change.actorId} may not make this change, or null when it may. The rules: the first JOIN creates the
   * group and its joiner is the admin; only the admin adds or removes other members; anyone leaves; a user does not
   * join an existing group by themselves, the admin adds them.
   */
  private static Refusal refusal(MembershipChange change, GroupState group, boolean isMember) {
    String actor = change.getActorId();
    String user = change.getUserId();
    String groupId = change.getGroupId();
    boolean self = actor.equals(user);
    if (change.getOp() == MembershipOp.JOIN) {
      if (group.members() == 0) {
        return self ? null : new Refusal("NO_GROUP", "group " + groupId + " does not exist: " + actor
            + " cannot add " + user + "; the first member creates a group by joining it");
      }
      if (self) {
        return isMember ? null : new Refusal("NOT_INVITED", user + " cannot join group " + groupId
            + " by themselves: only its admin adds members");
      }
      return actor.equals(group.admin()) ? null : new Refusal("NOT_ADMIN", actor
          + " is not the admin of group " + groupId + ": only the admin adds members (" + user + ")");
    }
    if (self) {
      return null; // anyone may leave
    }
    return actor.equals(group.admin()) ? null : new Refusal("NOT_ADMIN", actor
        + " is not the admin of group " + groupId + ": only the admin removes other members (" + user + ")");
  }

  /**
   * The state with its admin: a group from before admins were recorded gets the earliest member, whom the rules
   * make admin (stored with the next change of the group).
   */
  private GroupState withAdmin(String groupId, GroupState group) {
    if (group.admin() != null || group.members() == 0) {
      return group;
    }
    return group.withAdmin(earliestMember(groupId));
  }

  /** The member with the smallest join clock (one prefix scan of the group), null for an empty group. */
  private String earliestMember(String groupId) {
    String earliest = null;
    long earliestClock = Long.MAX_VALUE;
    try (KeyValueIterator<Bytes, byte[]> it =
        members.prefixScan(MemberKeys.groupPrefix(groupId), Serdes.Bytes().serializer())) {
      while (it.hasNext()) {
        KeyValue<Bytes, byte[]> member = it.next();
        long joinedAt = MemberKeys.joinedAt(member.value);
        if (joinedAt < earliestClock) {
          earliestClock = joinedAt;
          earliest = MemberKeys.userId(member.key);
        }
      }
    }
    return earliest;
  }

  private RejectedRecord reject(String code, String reason) {
    metrics.rejected().increment();
    return new RejectedRecord(code, reason);
  }
}
