package dev.impipe.fanout.internal;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.fanout.RejectedRecordException;
import dev.impipe.runtime.domain.Ids;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Applies JOIN / LEAVE to the membership store and tells the user with a CONVERSATION_JOINED / LEFT entry. A change
 * with an {@code actorId} (asked for through the API) must obey the group rules (see {@link #refusal}); a refused one
 * gives the actor a REJECTED entry and goes to the rejected topic. A change without one (an operator writing to the
 * topic, which Kafka ACLs protect) is applied as it is.
 */
public final class MembershipProcessor implements Processor<String, MembershipChange, String, InboxEntry> {

  private final FanoutMetrics metrics;
  private ProcessorContext<String, InboxEntry> context;
  private KeyValueStore<Bytes, byte[]> members;
  private TaskClock clock;
  private KeyValueStore<String, byte[]> groups;

  public MembershipProcessor(FanoutMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public void init(ProcessorContext<String, InboxEntry> context) {
    this.context = context;
    this.members = context.getStateStore(FanoutTopology.MEMBERS_STORE);
    this.clock = new TaskClock(context.getStateStore(FanoutTopology.CLOCK_STORE));
    this.groups = context.getStateStore(FanoutTopology.GROUPS_STORE);
  }

  @Override
  public void process(Record<String, MembershipChange> record) {
    MembershipChange change = record.value();
    if (change == null) {
      throw reject("membership change without a value (tombstone)");
    }
    if (!Ids.valid(change.getGroupId()) || !Ids.valid(change.getUserId())) {
      throw reject("invalid groupId or userId in membership change: " + change.getGroupId() + "/"
          + change.getUserId());
    }
    if (!change.getGroupId().equals(record.key())) {
      throw reject("membership change for group " + change.getGroupId() + " is keyed '" + record.key()
          + "': it must be keyed by its groupId to be co-partitioned with the group's messages");
    }
    if (change.getOp() != MembershipOp.JOIN && change.getOp() != MembershipOp.LEAVE) {
      throw reject("unknown membership operation " + change.getOp() + " (written by a newer producer?)");
    }
    if (change.getActorId() != null && !Ids.valid(change.getActorId())) {
      throw reject("invalid actorId in membership change: " + change.getActorId());
    }
    Bytes key = MemberKeys.key(change.getGroupId(), change.getUserId());
    boolean isMember = members.get(key) != null;
    boolean join = change.getOp() == MembershipOp.JOIN;
    GroupState group = withAdmin(change.getGroupId(), GroupState.decode(groups.get(change.getGroupId())));
    if (change.getActorId() != null) {
      Refusal refusal = refusal(change, group, isMember);
      if (refusal != null) {
        // The actor's devices learn of it; then the dead letter (same transaction, see RejectedRecordException).
        context.forward(record.withKey(change.getActorId()).withValue(refusal.entryFor(change)));
        metrics.inboxEntriesWritten(1);
        throw reject(refusal.reason());
      }
    }
    if (join == isMember) {
      return; // already in that state: a repeated JOIN or LEAVE changes nothing
    }
    long count = group.members() + (join ? 1 : -1);
    if (join) {
      members.put(key, MemberKeys.joinedAt(clock.tick()));
      // The first JOIN creates the group (again, once it was empty) and makes that user its admin.
      group = group.members() == 0 ? group.withAdmin(change.getUserId()) : group;
    } else {
      members.delete(key);
      if (count == 0) {
        group = group.withAdmin(null);
      } else if (change.getUserId().equals(group.admin())) {
        group = group.withAdmin(earliestMember(change.getGroupId())); // the admin left: the earliest remaining
      }
    }
    groups.put(change.getGroupId(), group.withMembers(count).encode());
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
    context.forward(record.withKey(change.getUserId()).withValue(entry));
    metrics.inboxEntriesWritten(1);
    if (!join && group.large()) {
      // Also in the group's own timeline, in order with its messages: a sync that reads the timeline before the
      // member's own LEFT has been applied (another partition) still stops at it, so nothing sent after the leave
      // is shown to the leaver.
      String timeline = Ids.groupTimeline(change.getGroupId());
      context.forward(record.withKey(timeline).withValue(InboxEntry.newBuilder(entry).setUserId(timeline)
          .setSenderId(change.getUserId()).setConversationSeq(entry.getTimelineFromSeq()).build()));
      metrics.inboxEntriesWritten(1);
    }
  }

  /**
   * Why {@code change.actorId} may not make this change, or null when it may. The rules: the first JOIN creates the
   * group and its joiner is the admin; only the admin adds or removes other members; anyone leaves; a user does not
   * join an existing group by themselves, the admin adds them.
   */
  private Refusal refusal(MembershipChange change, GroupState group, boolean isMember) {
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

  private RejectedRecordException reject(String reason) {
    metrics.rejected().increment();
    return new RejectedRecordException(reason);
  }
}
