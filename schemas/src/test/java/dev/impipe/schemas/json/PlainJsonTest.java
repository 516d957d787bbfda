package dev.impipe.schemas.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.impipe.avro.AckTimeout;
import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.MessageType;
import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The JSON a shell user types into {@code bin/im produce} and reads from {@code bin/im tail}. */
class PlainJsonTest {

  private static final String MINIMAL_MESSAGE = """
      {"messageId": "m-1", "clientMsgId": "c-1", "conversationId": "d:alice:bob",
       "conversationType": "DIRECT", "type": "MESSAGE", "senderId": "alice", "sentAt": 1714564800123}
      """;

  @Test
  void optionalFieldsMayBeOmitted() {
    ChatMessage message = PlainJson.fromJson(MINIMAL_MESSAGE, ChatMessage.class);

    assertThat(message.getMessageId()).isEqualTo("m-1");
    assertThat(message.getConversationType()).isEqualTo(ConversationType.DIRECT);
    assertThat(message.getType()).isEqualTo(MessageType.MESSAGE);
    assertThat(message.getSentAt()).isEqualTo(Instant.ofEpochMilli(1714564800123L));
    assertThat(message.getBody()).isNull();
    assertThat(message.getRecipientId()).isNull();
    assertThat(message.getReadUpToSeq()).isNull();
    assertThat(message.getAttributes()).isEmpty();
  }

  @Test
  void nullableValuesAreWrittenWithoutUnionWrappers() {
    ChatMessage message = PlainJson.fromJson("""
        {"messageId": "m-2", "clientMsgId": "c-2", "conversationId": "g-1", "conversationType": "GROUP",
         "type": "READ", "senderId": "bob", "groupId": "g-1", "readUpToSeq": 42, "body": null,
         "sentAt": 0, "attributes": {"client": "cli"}}
        """, ChatMessage.class);

    assertThat(message.getGroupId()).isEqualTo("g-1");
    assertThat(message.getReadUpToSeq()).isEqualTo(42L);
    assertThat(message.getBody()).isNull();
    assertThat(message.getAttributes()).containsExactly(Map.entry("client", "cli"));
  }

  @Test
  void timesAreEpochMillisOrIso8601() {
    String iso = MINIMAL_MESSAGE.replace("1714564800123", "\"2024-05-01T12:00:00.123Z\"");

    ChatMessage fromIso = PlainJson.fromJson(iso, ChatMessage.class);
    ChatMessage fromMillis = PlainJson.fromJson(MINIMAL_MESSAGE, ChatMessage.class);

    assertThat(fromIso.getSentAt()).isEqualTo(Instant.parse("2024-05-01T12:00:00.123Z"));
    assertThat(fromIso).isEqualTo(fromMillis);
  }

  @Test
  void aBadTimeNamesTheFieldAndTheAcceptedForms() {
    String bad = MINIMAL_MESSAGE.replace("1714564800123", "\"yesterday\"");

    assertThatThrownBy(() -> PlainJson.fromJson(bad, ChatMessage.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'sentAt'")
        .hasMessageContaining("ISO-8601")
        .hasMessageContaining("yesterday");
  }

  @Test
  void anUnknownEnumSymbolListsTheValidOnes() {
    String bad = MINIMAL_MESSAGE.replace("\"MESSAGE\"", "\"SHOUT\"");

    assertThatThrownBy(() -> PlainJson.fromJson(bad, ChatMessage.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'type'")
        .hasMessageContaining("[MESSAGE, READ, RECALL, JOIN, LEAVE]")
        .hasMessageContaining("SHOUT");
  }

  @Test
  void anUnknownFieldIsAnError() {
    String typo = MINIMAL_MESSAGE.replace("\"senderId\"", "\"sender\"");

    assertThatThrownBy(() -> PlainJson.fromJson(typo, ChatMessage.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Unknown field 'sender'")
        .hasMessageContaining("ChatMessage");
  }

  @Test
  void aMissingRequiredFieldIsNamed() {
    String missing = MINIMAL_MESSAGE.replace("\"senderId\": \"alice\", ", "");

    assertThatThrownBy(() -> PlainJson.fromJson(missing, ChatMessage.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Missing required field 'senderId'");
  }

  @Test
  void nullForARequiredFieldIsNamed() {
    String nulled = MINIMAL_MESSAGE.replace("\"alice\"", "null");

    assertThatThrownBy(() -> PlainJson.fromJson(nulled, ChatMessage.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'senderId'")
        .hasMessageContaining("a string");
  }

  @Test
  void wrongValueTypesAreNamed() {
    assertThatThrownBy(() -> PlainJson.fromJson(
        MINIMAL_MESSAGE.replace("}", ", \"readUpToSeq\": \"ten\"}"), ChatMessage.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'readUpToSeq'");
    assertThatThrownBy(() -> PlainJson.fromJson(
        MINIMAL_MESSAGE.replace("}", ", \"attributes\": {\"k\": 1}}"), ChatMessage.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'attributes.k'");
    assertThatThrownBy(() -> PlainJson.fromJson("""
        {"userId": "u", "deviceId": "d", "seqs": [1, "two"], "firstPushedAt": 0, "deadline": 0, "attempts": 1}
        """, AckTimeout.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'seqs[1]'");
  }

  @Test
  void malformedJsonIsReportedAsSuch() {
    assertThatThrownBy(() -> PlainJson.fromJson("{\"messageId\": ", ChatMessage.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("Malformed JSON");
    assertThatThrownBy(() -> PlainJson.fromJson("[1, 2]", ChatMessage.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("an object");
  }

  @Test
  void toJsonIsPlainAndReadsBack() {
    ChatMessage message = ChatMessage.newBuilder()
        .setMessageId("m-3").setClientMsgId("c-3").setConversationId("d:alice:bob")
        .setConversationType(ConversationType.DIRECT).setType(MessageType.MESSAGE)
        .setSenderId("alice").setRecipientId("bob").setBody("hi \u00e9")
        .setSentAt(Instant.ofEpochMilli(1714564800123L)).setAttributes(Map.of("lang", "fr"))
        .build();

    ObjectNode json = PlainJson.toJson(message);

    assertThat(json.get("sentAt").isIntegralNumber()).as("times as epoch millis").isTrue();
    assertThat(json.get("sentAt").longValue()).isEqualTo(1714564800123L);
    assertThat(json.get("recipientId").asText()).as("no union wrapper").isEqualTo("bob");
    assertThat(json.get("groupId").isNull()).isTrue();
    assertThat(json.get("conversationType").asText()).isEqualTo("DIRECT");
    assertThat(json.get("attributes").get("lang").asText()).isEqualTo("fr");
    assertThat(PlainJson.fromJson(json, ChatMessage.class)).isEqualTo(message);
  }

  @Test
  void arraysAndLongsRoundTrip() {
    AckTimeout timeout = AckTimeout.newBuilder().setUserId("u").setDeviceId("d").setSeqs(List.of(1L, 5_000_000_000L))
        .setFirstPushedAt(Instant.ofEpochMilli(1)).setDeadline(Instant.ofEpochMilli(2)).setAttempts(3).build();

    ObjectNode json = PlainJson.toJson(timeout);

    assertThat(json.get("seqs").toString()).isEqualTo("[1,5000000000]");
    assertThat(PlainJson.fromJson(json.toString(), AckTimeout.class)).isEqualTo(timeout);
    InboxEntry entry = PlainJson.fromJson("""
        {"userId": "u", "type": "CONVERSATION_JOINED", "conversationId": "g", "conversationSeq": -1,
         "timestamp": "2024-01-01T00:00:00Z"}
        """, InboxEntry.class);
    assertThat(PlainJson.fromJson(PlainJson.toJson(entry), InboxEntry.class)).isEqualTo(entry);
  }

  @Test
  void bytesAreBase64() {
    byte[] value = {0, 1, 2, (byte) 0xFE, (byte) 0xFF};
    ScheduleCommand command = PlainJson.fromJson("""
        {"id": "s-1", "op": "SCHEDULE", "deliverAt": "2030-01-01T00:00:00Z", "targetTopic": "im.messages",
         "key": "a2V5", "value": "AAEC/v8=", "headers": {"trace": "AQ=="}}
        """, ScheduleCommand.class);

    assertThat(command.getOp()).isEqualTo(ScheduleOp.SCHEDULE);
    assertThat(StandardCharsets.UTF_8.decode(command.getKey().duplicate()).toString()).isEqualTo("key");
    assertThat(command.getValue()).isEqualTo(ByteBuffer.wrap(value));
    assertThat(command.getHeaders().get("trace")).isEqualTo(ByteBuffer.wrap(new byte[] {1}));

    ObjectNode json = PlainJson.toJson(command);
    assertThat(json.get("key").asText()).isEqualTo("a2V5");
    assertThat(json.get("value").asText()).isEqualTo("AAEC/v8=");
    assertThat(json.get("headers").get("trace").asText()).isEqualTo("AQ==");
    assertThat(PlainJson.fromJson(json, ScheduleCommand.class)).isEqualTo(command);
  }

  @Test
  void bytesThatAreNotBase64AreNamed() {
    assertThatThrownBy(() -> PlainJson.fromJson("""
        {"id": "s-1", "op": "CANCEL", "deliverAt": 0, "value": "not base64!"}
        """, ScheduleCommand.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'value'")
        .hasMessageContaining("base64");
  }
}
