package dev.impipe.fanout.internal;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.runtime.streams.OrderedKey;
import dev.impipe.runtime.streams.VersionedValue;
import java.time.Instant;
import org.apache.kafka.common.utils.Bytes;

/**
 * A group's switch of diffusion mode whose CONVERSATION_MODE entries are still being written, one round at a time:
 * the value of {@code fanout-mode-switches} (key: the group id). Members are told in the order of their keys in
 * {@code fanout-members} ({@link MemberKeys}); {@code doneThrough} is how far the committed rounds got.
 *
 * <p>Who is owed an entry: every member who joined before the switch ({@code joinedAt < clock}) and whose key is past
 * {@code doneThrough}. A member who joined after it learned the mode from their own CONVERSATION_JOINED entry; one who
 * leaves before being told is told right before their CONVERSATION_LEFT entry (so their read interval of the timeline
 * covers what was sent between the switch and the leave).
 *
 * <p>Encoding: {@link VersionedValue} {@code [version 1] int64 seq, int64 clock, int64 sentAt, int64 recordTime,
 * int8 readDiffusion, string doneThrough (null before the first round)}.
 *
 * @param seq conversation seq of the message that switched the group: each entry's {@code timelineFromSeq}
 * @param clock the task clock at the switch (see {@code TaskClock}); members with a smaller join clock are owed
 * @param sentAt the switching message's {@code sentAt}: each entry's {@code timestamp}
 * @param recordTime the switching record's timestamp: the timestamp of each entry's record
 * @param readDiffusion the mode switched to
 * @param doneThrough user id of the last member (in key order) the committed rounds went through; null: none yet
 */
public record ModeSwitch(long seq, long clock, long sentAt, long recordTime, boolean readDiffusion,
    String doneThrough) {

  private static final int VERSION = 1;

  public static ModeSwitch decode(byte[] value) {
    VersionedValue.Reader r = VersionedValue.read(value, "fanout-mode-switches", VERSION);
    ModeSwitch s = new ModeSwitch(r.int64(), r.int64(), r.int64(), r.int64(), r.int8() == 1, r.string());
    r.end();
    return s;
  }

  public byte[] encode() {
    return VersionedValue.write(VERSION).int64(seq).int64(clock).int64(sentAt).int64(recordTime)
        .int8(readDiffusion ? 1 : 0).string(doneThrough).build();
  }

  /** Whether {@code userId}, a member of {@code groupId} since join clock {@code joinedAt}, is still owed an entry. */
  public boolean owes(String groupId, String userId, long joinedAt) {
    return joinedAt < clock && (doneThrough == null
        || OrderedKey.compare(MemberKeys.key(groupId, userId).get(), MemberKeys.key(groupId, doneThrough).get()) > 0);
  }

  /** The first key of {@code fanout-members} the next round reads (inclusive). */
  public Bytes resumeFrom(String groupId) {
    return doneThrough == null ? MemberKeys.groupPrefix(groupId)
        : Bytes.wrap(OrderedKey.after(MemberKeys.key(groupId, doneThrough).get()));
  }

  public ModeSwitch withDoneThrough(String userId) {
    return new ModeSwitch(seq, clock, sentAt, recordTime, readDiffusion, userId);
  }

  /** The CONVERSATION_MODE entry of {@code userId}. */
  public InboxEntry entryFor(String groupId, String userId) {
    return InboxEntry.newBuilder().setUserId(userId).setType(InboxEntryType.CONVERSATION_MODE)
        .setConversationId(groupId).setConversationSeq(seq).setTimestamp(Instant.ofEpochMilli(sentAt))
        .setTimelineFromSeq(seq).setReadDiffusion(readDiffusion).build();
  }
}
