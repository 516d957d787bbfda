package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MessageType;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MessageChecksTest {

  private static ChatMessage.Builder groupMessage() {
    return ChatMessage.newBuilder().setMessageId("m1").setClientMsgId("c1").setType(MessageType.MESSAGE)
        .setConversationId("g").setConversationType(ConversationType.GROUP).setGroupId("g").setSenderId("alice")
        .setBody("hi").setSentAt(Instant.EPOCH).setAttributes(Map.of());
  }

  @Test
  void aWellFormedGroupMessageKeyedByItsConversationIsValid() {
    assertThat(MessageChecks.invalid("g", groupMessage().build())).isNull();
  }

  @Test
  void aMessageKeyedByAnythingButItsConversationIsInvalid() {
    assertThat(MessageChecks.invalid("h", groupMessage().build())).isEqualTo("message of conversation g is keyed "
        + "'h': it must be keyed by its conversationId (one partition per conversation keeps it in order)");
  }

  @Test
  void eachTypeNeedsItsOwnFields() {
    assertThat(MessageChecks.invalid("g", groupMessage().setType(MessageType.READ).build()))
        .isEqualTo("READ needs readUpToSeq >= 0");
    assertThat(MessageChecks.invalid("g", groupMessage().setType(MessageType.READ).setReadUpToSeq(0L).build()))
        .isNull();
    assertThat(MessageChecks.invalid("g", groupMessage().setType(MessageType.RECALL).build()))
        .isEqualTo("RECALL needs refMessageId");
    assertThat(MessageChecks.invalid("g", groupMessage().setType(MessageType.JOIN).build()))
        .isEqualTo("JOIN needs a valid memberId, got 'null'");
    assertThat(MessageChecks.invalid("g", groupMessage().setType(MessageType.UNKNOWN).build()))
        .isEqualTo("unknown message type (written by a newer producer?)");
  }
}
