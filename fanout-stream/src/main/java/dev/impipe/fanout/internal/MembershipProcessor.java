package dev.impipe.fanout.internal;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.streams.RejectedRecord;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The legacy membership input, {@code im.group-members}: JOIN / LEAVE written there directly (an operator, or a
 * producer from before membership changes went into {@code im.messages}). Applied with the same rules as the control
 * records, but ordered against the group's messages only by record timestamps. Records the fan-out itself derived
 * from control records (header {@value #DERIVED_HEADER}) are skipped: they were applied already.
 */
public final class MembershipProcessor implements Processor<String, MembershipChange, String, InboxEntry> {

  /** Header on the {@code im.group-members} records the fan-out writes from applied control records. */
  public static final String DERIVED_HEADER = "im-derived-from";

  private final FanoutMetrics metrics;
  private final FanoutConfig config;
  private final FanoutNames names;
  private ProcessorContext<String, InboxEntry> context;
  private MembershipRules rules;

  public MembershipProcessor(FanoutConfig config, FanoutMetrics metrics, FanoutNames names) {
    this.config = config;
    this.metrics = metrics;
    this.names = names;
  }

  @Override
  public void init(ProcessorContext<String, InboxEntry> context) {
    this.context = context;
    KeyValueStore<Bytes, byte[]> members = context.getStateStore(names.membersStore());
    this.rules = new MembershipRules(metrics, members, context.getStateStore(names.groupsStore()),
        new TaskClock(context.getStateStore(names.clockStore())),
        context.getStateStore(names.pastMembersStore()),
        new ModeSwitchRounds(context.getStateStore(names.modeSwitchesStore()), members, metrics),
        config.groupMaxMembers());
  }

  @Override
  public void process(Record<String, MembershipChange> record) {
    if (record.headers().lastHeader(DERIVED_HEADER) != null) {
      return; // written by this fan-out from a control record of im.messages, applied there
    }
    MembershipChange change = record.value();
    if (change == null) {
      throw reject("membership change without a value (tombstone)");
    }
    validate(change, record.key());
    rules.apply(change, -1L, record.timestamp(),
        (user, entry) -> context.forward(record.withKey(user).withValue(entry)));
  }

  /** The checks both membership inputs make; {@code key} is the record's key (must be the group id). */
  static String invalid(MembershipChange change, String key) {
    if (!Ids.valid(change.getGroupId()) || !Ids.valid(change.getUserId())) {
      return "invalid groupId or userId in membership change: " + change.getGroupId() + "/" + change.getUserId();
    }
    if (!change.getGroupId().equals(key)) {
      return "membership change for group " + change.getGroupId() + " is keyed '" + key
          + "': it must be keyed by its groupId to be co-partitioned with the group's messages";
    }
    if (change.getOp() != MembershipOp.JOIN && change.getOp() != MembershipOp.LEAVE) {
      return "unknown membership operation " + change.getOp() + " (written by a newer producer?)";
    }
    if (change.getActorId() != null && !Ids.valid(change.getActorId())) {
      return "invalid actorId in membership change: " + change.getActorId();
    }
    return null;
  }

  private void validate(MembershipChange change, String key) {
    String invalid = invalid(change, key);
    if (invalid != null) {
      throw reject(invalid);
    }
  }

  private RejectedRecord reject(String reason) {
    metrics.rejected().increment();
    return RejectedRecord.invalid(reason);
  }
}
