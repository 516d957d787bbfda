package dev.impipe.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.UUID;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The messageId names one message: the same clientMsgId in two chats gives two ids, a retry the same one. */
class MessageIdPerConversationTest {

  private String registryUrl;
  private MessagePublisher publisher;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://ingest-ids-" + UUID.randomUUID();
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    publisher = new MessagePublisher(topics, IngestConfig.defaults(),
        Clock.fixed(Instant.parse("2026-11-22T10:00:00Z"), ZoneOffset.UTC),
        new MockProducer<>(true, null, new StringSerializer(), new ByteArraySerializer()));
  }

  @AfterEach
  void tearDown() {
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void theSameClientMsgIdInTwoChatsGetsTwoMessageIds() throws Exception {
    String toAlice = publisher.send(SendRequest.direct("bob", "alice", "hi", "c1")).get().messageId();
    String toGroup = publisher.send(SendRequest.group("bob", "team", "hi", "c1")).get().messageId();
    String retry = publisher.send(SendRequest.direct("bob", "alice", "hi", "c1")).get().messageId();

    assertThat(toAlice).isNotEqualTo(toGroup);
    assertThat(retry).isEqualTo(toAlice);
    // ids issued before stay what they were (they are in the records); the new ones never collide with them
    assertThat(MessagePublisher.legacyMessageId("bob", "c1")).isNotIn(toAlice, toGroup);
  }
}
