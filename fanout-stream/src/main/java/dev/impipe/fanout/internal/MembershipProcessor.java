package dev.impipe.fanout.internal;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.fanout.RejectedRecordException;
import dev.impipe.runtime.domain.Ids;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/** Applies JOIN / LEAVE to the membership store and tells the user with a CONVERSATION_JOINED / LEFT entry. */
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
    Bytes key = MemberKeys.key(change.getGroupId(), change.getUserId());
    boolean isMember = members.get(key) != null;
    boolean join = change.getOp() == MembershipOp.JOIN;
    if (join == isMember) {
      return; // already in that state: a repeated JOIN or LEAVE changes nothing
    }
    if (join) {
      members.put(key, MemberKeys.joinedAt(clock.tick()));
    } else {
      members.delete(key);
    }
    GroupState group = GroupState.decode(groups.get(change.getGroupId()));
    groups.put(change.getGroupId(), group.withMembers(group.members() + (join ? 1 : -1)).encode());
    metrics.membershipChanges().increment();
    InboxEntry entry = InboxEntry.newBuilder()
        .setUserId(change.getUserId())
        .setType(join ? InboxEntryType.CONVERSATION_JOINED : InboxEntryType.CONVERSATION_LEFT)
        .setConversationId(change.getGroupId())
        .setConversationSeq(-1L)
        .setTimestamp(change.getAt())
        // Takes effect right after the last message processed for the group; in a large group the member reads
        // the group timeline from there.
        .setTimelineFromSeq(group.nextSeq())
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
          .setSenderId(change.getUserId()).setConversationSeq(group.nextSeq()).build()));
      metrics.inboxEntriesWritten(1);
    }
  }

  private RejectedRecordException reject(String reason) {
    metrics.rejected().increment();
    return new RejectedRecordException(reason);
  }
}
