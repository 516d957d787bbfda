package dev.impipe.fanout.internal;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;

/**
 * An authorization refusal: a well-formed request its actor may not make. Besides the dead letter in
 * {@code im.rejected}, the actor gets a {@code REJECTED} inbox entry built here, so their devices learn that the
 * request they were answered 202 for did not happen.
 *
 * @param code for programs: {@code NOT_MEMBER}, {@code NOT_ADMIN}, {@code NOT_SENDER}, {@code NOT_INVITED},
 *     {@code NO_GROUP}, {@code UNKNOWN_MESSAGE}, {@code GROUP_FULL}
 * @param reason for people; also the {@code __streams.errors.message} header of the dead letter
 */
record Refusal(String code, String reason) {

  /** The REJECTED entry for the sender of a refused message, read marker or recall at conversation seq {@code seq}. */
  InboxEntry entryFor(ChatMessage m, long seq) {
    return InboxEntry.newBuilder()
        .setUserId(m.getSenderId())
        .setType(InboxEntryType.REJECTED)
        .setConversationId(m.getConversationId())
        .setConversationSeq(seq)
        .setMessageId(m.getMessageId())
        .setClientMsgId(m.getClientMsgId())
        .setSenderId(m.getSenderId())
        .setRefMessageId(m.getRefMessageId())
        .setTimestamp(m.getSentAt())
        .setReason(reason)
        .setReasonCode(code)
        .setRejectedOp(m.getType().name())
        .build();
  }

  /**
   * The REJECTED entry for the actor of a refused membership change (only for a change with an actor: an operator's
   * change without one is refused only by the size cap, and goes to {@code im.rejected} alone);
   * {@code seq} is the change's conversation seq when it came through {@code im.messages}, else -1.
   */
  InboxEntry entryFor(MembershipChange change, long seq) {
    return InboxEntry.newBuilder()
        .setUserId(change.getActorId())
        .setType(InboxEntryType.REJECTED)
        .setConversationId(change.getGroupId())
        .setConversationSeq(seq)
        .setClientMsgId(change.getClientMsgId())
        .setSenderId(change.getActorId())
        .setTimestamp(change.getAt())
        .setReason(reason)
        .setReasonCode(code)
        .setRejectedOp(change.getOp().name())
        .setTargetUserId(change.getUserId())
        .build();
  }
}
