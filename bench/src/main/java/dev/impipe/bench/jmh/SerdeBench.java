package dev.impipe.bench.jmh;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.MessageType;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import dev.impipe.schemas.serde.SpecificAvroSerde;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/** ChatMessage through the pipeline's Confluent-wire-format serde, with the in-memory ({@code mock://}) registry. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SerdeBench {

  private static final String TOPIC = "im.messages";
  private SpecificAvroSerde<ChatMessage> serde;
  private ChatMessage message;
  private byte[] bytes;

  @Setup
  public void setup() {
    serde = new SpecificAvroSerde<>(ChatMessage.class, SchemaRegistryClients.forUrl("mock://jmh"), false);
    message = ChatMessage.newBuilder().setMessageId("m0123456789abcdef0123456789abc").setClientMsgId("c-42")
        .setConversationId("d:alice:bob").setConversationType(ConversationType.DIRECT).setType(MessageType.MESSAGE)
        .setSenderId("alice").setRecipientId("bob").setBody("x".repeat(64)).setSentAt(Instant.now())
        .setAttributes(Map.of()).build();
    bytes = serde.serializer().serialize(TOPIC, message);
  }

  @Benchmark
  public byte[] serialize() {
    return serde.serializer().serialize(TOPIC, message);
  }

  @Benchmark
  public ChatMessage deserialize() {
    return serde.deserializer().deserialize(TOPIC, bytes);
  }

  @Benchmark
  public ChatMessage roundTrip() {
    return serde.deserializer().deserialize(TOPIC, serde.serializer().serialize(TOPIC, message));
  }
}
