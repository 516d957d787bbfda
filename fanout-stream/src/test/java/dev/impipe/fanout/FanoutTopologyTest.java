package dev.impipe.fanout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.catchRuntimeException;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipChange;
import dev.impipe.avro.MembershipOp;
import dev.impipe.avro.MessageType;
import dev.impipe.fanout.internal.MemberKeys;
import dev.impipe.runtime.domain.HistoryKey;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.errors.DeserializationExceptionHandler;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class FanoutTopologyTest {

  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");

  private String registryUrl;
  private ImTopics topics;
  private FanoutMetrics metrics;
  private TopologyTestDriver driver;
  private TestInputTopic<String, ChatMessage> messages;
  private TestInputTopic<String, byte[]> rawMessages;
  private TestInputTopic<String, MembershipChange> members;
  private TestOutputTopic<String, InboxEntry> inbox;
  private TestOutputTopic<byte[], byte[]> rejected;
  private TestOutputTopic<String, ChatMessage> history;
  private int clientIds;

  @BeforeEach
  void setUp() {
    registryUrl = "mock://fanout-" + UUID.randomUUID();
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
    metrics = new FanoutMetrics(new SimpleMeterRegistry());
    // Write diffusion only here; HybridDiffusionTest covers large groups.
    driver = new TopologyTestDriver(FanoutTopology.build(topics, FanoutConfig.defaults().withLargeGroupThreshold(0),
        metrics),
        StreamsTestConfig.forDriver("fanout"));
    messages = driver.createInputTopic(topics.messages().name(), topics.messages().keySerde().serializer(),
        topics.messages().valueSerde().serializer(), T0, Duration.ZERO);
    rawMessages = driver.createInputTopic(topics.messages().name(), new StringSerializer(),
        new ByteArraySerializer(), T0, Duration.ZERO);
    members = driver.createInputTopic(topics.groupMembers().name(), topics.groupMembers().keySerde().serializer(),
        topics.groupMembers().valueSerde().serializer(), T0, Duration.ZERO);
    inbox = driver.createOutputTopic(topics.inbox().name(), topics.inbox().keySerde().deserializer(),
        topics.inbox().valueSerde().deserializer());
    rejected = driver.createOutputTopic(topics.names().rejected(), new ByteArrayDeserializer(),
        new ByteArrayDeserializer());
    history = driver.createOutputTopic(topics.history().name(), new StringDeserializer(),
        topics.history().valueSerde().deserializer());
  }

  @AfterEach
  void tearDown() {
    driver.close();
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void directMessageGoesToRecipientAndToSendersOtherDevices() {
    // When alice writes to bob (offset 0 of im.messages)
    send(direct("alice", "bob", "hi"));

    // Then bob and alice each get one MESSAGE entry carrying the conversation seq
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).extracting(kv -> kv.key).containsExactly("bob", "alice");
    InboxEntry bob = out.get(0).value;
    assertThat(bob.getType()).isEqualTo(InboxEntryType.MESSAGE);
    assertThat(bob.getConversationId()).isEqualTo("d:alice:bob");
    assertThat(bob.getConversationSeq()).isZero();
    assertThat(bob.getBody()).isEqualTo("hi");
    assertThat(bob.getSenderId()).isEqualTo("alice");
    assertThat(bob.getTimestamp()).isEqualTo(T0);

    // And a second message has the next conversation seq
    send(direct("bob", "alice", "hello"));
    assertThat(inbox.readValuesToList()).extracting(InboxEntry::getConversationSeq).containsExactly(1L, 1L);
    assertThat(inbox.isEmpty()).isTrue();
  }

  @Test
  void groupMessageReachesExactlyTheCurrentMembers() {
    // Given a group with alice, bob and carol
    join("g1", "alice");
    join("g1", "bob");
    join("g1", "carol");
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactly("alice:CONVERSATION_JOINED", "bob:CONVERSATION_JOINED", "carol:CONVERSATION_JOINED");

    // When alice writes to the group
    send(group("alice", "g1", "first"));

    // Then every member gets it, the sender included
    assertThat(recipients()).containsExactlyInAnyOrder("alice", "bob", "carol");

    // When carol leaves and dave joins, then bob writes
    leave("g1", "carol");
    join("g1", "dave");
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactly("carol:CONVERSATION_LEFT", "dave:CONVERSATION_JOINED");
    send(group("bob", "g1", "second"));

    // Then carol gets nothing later, dave gets nothing earlier
    assertThat(recipients()).containsExactlyInAnyOrder("alice", "bob", "dave");
    assertThat(inbox.isEmpty()).isTrue();
  }

  @Test
  void repeatedJoinOrLeaveChangesNothing() {
    join("g1", "alice");
    join("g1", "alice");
    leave("g1", "bob");
    assertThat(inbox.readKeyValuesToList()).hasSize(1);
  }

  @Test
  void groupIdsThatArePrefixesOfEachOtherDoNotMix() {
    // Given g1 = {alice} and g10 = {bob}
    join("g1", "alice");
    join("g10", "bob");
    inbox.readKeyValuesToList();

    // When alice writes to g1, then only alice gets it
    send(group("alice", "g1", "hi"));
    assertThat(recipients()).containsExactly("alice");
  }

  @Test
  void duplicateClientMsgIdFromTheSameSenderIsFannedOutOnce() {
    ChatMessage first = direct("alice", "bob", "hi");
    ChatMessage retry = ChatMessage.newBuilder(first).setMessageId("other-id").build();

    // When the same clientMsgId arrives twice (a client retry)
    send(first);
    send(retry);

    // Then it is fanned out once
    assertThat(inbox.readKeyValuesToList()).hasSize(2);
    assertThat(metrics.duplicates().count()).isEqualTo(1.0);

    // But the same clientMsgId from another sender is another message
    send(ChatMessage.newBuilder(direct("bob", "alice", "yo")).setClientMsgId(first.getClientMsgId()).build());
    assertThat(inbox.readKeyValuesToList()).hasSize(2);
  }

  @Test
  void duplicateAfterTheDedupeWindowIsANewMessage() {
    ChatMessage first = direct("alice", "bob", "hi");
    send(first);
    inbox.readKeyValuesToList();

    // 25 hours later (window 24 h) the same clientMsgId is accepted again
    messages.pipeInput(new TestRecord<>(first.getConversationId(), first, T0.plus(Duration.ofHours(25))));
    assertThat(inbox.readKeyValuesToList()).hasSize(2);
  }

  @Test
  void readMarkerGoesToReadersOtherDevicesAndToTheOtherParty() {
    // When bob reads the direct chat up to seq 7
    send(ChatMessage.newBuilder(direct("bob", "alice", null)).setType(MessageType.READ).setReadUpToSeq(7L).build());

    // Then bob's own inbox and alice's (a read receipt) get READ entries
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).extracting(kv -> kv.key).containsExactly("bob", "alice");
    assertThat(out).allSatisfy(kv -> {
      assertThat(kv.value.getType()).isEqualTo(InboxEntryType.READ);
      assertThat(kv.value.getReadUpToSeq()).isEqualTo(7L);
    });

    // And in a group only the reader's own devices learn it
    join("g1", "bob");
    join("g1", "carol");
    inbox.readKeyValuesToList();
    send(ChatMessage.newBuilder(group("bob", "g1", null)).setType(MessageType.READ).setReadUpToSeq(3L).build());
    assertThat(recipients()).containsExactly("bob");
  }

  @Test
  void recallBySenderReachesEveryoneWhoGotTheOriginal() {
    // Given alice and bob in g1, and a message from alice
    join("g1", "alice");
    join("g1", "bob");
    ChatMessage original = group("alice", "g1", "oops");
    send(original);
    // and carol who joins afterwards
    join("g1", "carol");
    inbox.readKeyValuesToList();

    // When alice recalls it
    send(ChatMessage.newBuilder(group("alice", "g1", null)).setType(MessageType.RECALL)
        .setRefMessageId(original.getMessageId()).build());

    // Then alice and bob get a RECALL entry, carol (who never got it) does not
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).extracting(kv -> kv.key).containsExactlyInAnyOrder("alice", "bob");
    assertThat(out).allSatisfy(kv -> {
      assertThat(kv.value.getType()).isEqualTo(InboxEntryType.RECALL);
      assertThat(kv.value.getRefMessageId()).isEqualTo(original.getMessageId());
      assertThat(kv.value.getBody()).isNull();
    });
  }

  @Test
  void aRecallReachesAMemberWhoLeftAndRejoinedAfterTheMessageButNotANewcomer() {
    // Given alice and bob in g1, and a message from alice
    join("g1", "alice");
    join("g1", "bob");
    ChatMessage original = group("alice", "g1", "oops");
    send(original);
    // and bob leaves and is added back, carol joins for the first time
    leave("g1", "bob");
    join("g1", "bob");
    join("g1", "carol");
    inbox.readKeyValuesToList();

    // When alice recalls it
    send(ChatMessage.newBuilder(group("alice", "g1", null)).setType(MessageType.RECALL)
        .setRefMessageId(original.getMessageId()).build());

    // Then bob, whose inbox holds the original, gets the RECALL too; carol, who never got it, does not
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactlyInAnyOrder("alice:RECALL", "bob:RECALL");
  }

  @Test
  void aRecallReachesAMemberWhoLeftAndWasNotAddedBackButNotOneWhoLeftBeforeTheMessage() {
    // Given g1 = {alice, bob, dave}; dave leaves before alice's message, bob after it (and is not added back)
    join("g1", "alice");
    join("g1", "bob");
    join("g1", "dave");
    join("g2", "erin");
    leave("g1", "dave");
    ChatMessage original = group("alice", "g1", "oops");
    send(original);
    leave("g1", "bob");
    // and erin, a member of g2 (whose keys sort right after g1's) while it was sent, leaves g2
    leave("g2", "erin");
    inbox.readKeyValuesToList();

    // When alice recalls it
    send(ChatMessage.newBuilder(group("alice", "g1", null)).setType(MessageType.RECALL)
        .setRefMessageId(original.getMessageId()).build());

    // Then bob, whose inbox still holds the original, gets the RECALL although he is no longer a member; dave, who
    // never got it, does not, nor does erin, who left another group
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).extracting(kv -> kv.key + ":" + kv.value.getType() + ":" + kv.value.getRefMessageId())
        .containsExactlyInAnyOrder("alice:RECALL:" + original.getMessageId(), "bob:RECALL:" + original.getMessageId());
    assertThat(inbox.isEmpty()).isTrue();
  }

  @Test
  void recallByAnotherUserIsRejectedAndOnlyTellsTheRecaller() {
    ChatMessage original = direct("alice", "bob", "hi");
    send(original);
    inbox.readKeyValuesToList();

    // When bob tries to recall alice's message
    send(ChatMessage.newBuilder(direct("bob", "alice", null)).setType(MessageType.RECALL)
        .setRefMessageId(original.getMessageId()).build());

    // Then nothing is recalled: only bob learns of the refusal (REJECTED; RecallAuthorizationTest has the details),
    // and the record is in im.rejected with the reason
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactly("bob:REJECTED");
    TestRecord<byte[], byte[]> rej = rejected.readRecord();
    assertThat(header(rej, "__streams.errors.message")).contains("only its sender may recall it");
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void messageFromNonMemberIsRejectedWithReasonAndSourceAndProcessingContinues() {
    // Given g1 = {alice}
    join("g1", "alice");
    inbox.readKeyValuesToList();

    // When mallory (not a member) writes to g1 (im.messages offset 0), then alice does (offset 1)
    ChatMessage bad = group("mallory", "g1", "spam");
    send(bad);
    send(group("alice", "g1", "legit"));

    // Then the bad one is in im.rejected, original bytes, with reason and source headers
    TestRecord<byte[], byte[]> rej = rejected.readRecord();
    assertThat(new String(rej.key(), StandardCharsets.UTF_8)).isEqualTo("g1");
    assertThat(topics.messages().valueSerde().deserializer().deserialize(topics.messages().name(), rej.value()))
        .isEqualTo(bad);
    assertThat(header(rej, "__streams.errors.message")).isEqualTo("sender mallory is not a member of group g1");
    assertThat(header(rej, "im.reject.code")).isEqualTo("NOT_MEMBER");
    assertThat(header(rej, "__streams.errors.topic")).isEqualTo("im.messages");
    assertThat(header(rej, "__streams.errors.offset")).isEqualTo("0");
    assertThat(rejected.isEmpty()).isTrue();
    // And mallory was told (REJECTED), and the good one went through
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).extracting(kv -> kv.key + ":" + kv.value.getType())
        .containsExactly("mallory:REJECTED", "alice:MESSAGE");
    assertThat(out.get(1).value.getBody()).isEqualTo("legit");
    assertThat(out.get(1).value.getConversationSeq()).isEqualTo(1L);
  }

  @Test
  void undeserializableBytesAreRejectedAndProcessingContinues() {
    // When garbage lands in im.messages, followed by a valid message
    byte[] garbage = {1, 2, 3, 4, 5, 6};
    rawMessages.pipeInput("d:alice:bob", garbage);
    send(direct("alice", "bob", "after garbage"));

    // Then the valid one is fanned out
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key).containsExactly("bob", "alice");

    // And the garbage is dead-lettered to im.rejected as it came, with where it came from. TopologyTestDriver does
    // not pass a deserialization handler's dead-letter records on (processing ones it does), so the handler the app
    // runs with (the production settings) is handed the deserializer's own exception here.
    Properties props = StreamsTestConfig.forDriver("fanout");
    StreamsConfig streamsConfig = new StreamsConfig(props);
    DeserializationExceptionHandler handler = streamsConfig.getConfiguredInstance(
        StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, DeserializationExceptionHandler.class,
        streamsConfig.originals());
    RuntimeException thrown = catchRuntimeException(() -> topics.messages().valueSerde().deserializer()
        .deserialize(topics.messages().name(), garbage));
    ConsumerRecord<byte[], byte[]> raw = new ConsumerRecord<>(topics.messages().name(), 0, 0,
        "d:alice:bob".getBytes(StandardCharsets.UTF_8), garbage);
    DeserializationExceptionHandler.Response response = handler.handleError(sourceContext(raw), raw, thrown);
    assertThat(response.result()).isEqualTo(DeserializationExceptionHandler.Result.RESUME);
    assertThat(response.deadLetterQueueRecords()).singleElement().satisfies(dead -> {
      assertThat(dead.topic()).isEqualTo("im.rejected");
      assertThat(new String(dead.key(), StandardCharsets.UTF_8)).isEqualTo("d:alice:bob");
      assertThat(dead.value()).containsExactly(1, 2, 3, 4, 5, 6);
      Header source = dead.headers().lastHeader("__streams.errors.topic");
      assertThat(new String(source.value(), StandardCharsets.UTF_8)).isEqualTo("im.messages");
      assertThat(dead.headers().lastHeader("__streams.errors.message")).isNotNull();
    });
  }

  /** What Kafka Streams tells a handler about the source record (topic, partition, offset, raw bytes). */
  private static ErrorHandlerContext sourceContext(ConsumerRecord<byte[], byte[]> raw) {
    return new ErrorHandlerContext() {
      @Override
      public String topic() { return raw.topic(); }
      @Override
      public int partition() { return raw.partition(); }
      @Override
      public long offset() { return raw.offset(); }
      @Override
      public org.apache.kafka.common.header.Headers headers() { return raw.headers(); }
      @Override
      public String processorNodeId() { return FanoutTopology.MESSAGES_SOURCE; }
      @Override
      public TaskId taskId() { return new TaskId(0, 0); }
      @Override
      public long timestamp() { return T0.toEpochMilli(); }
      @Override
      public byte[] sourceRawKey() { return raw.key(); }
      @Override
      public byte[] sourceRawValue() { return raw.value(); }
    };
  }

  @Test
  void messageKeyedByAnythingButItsConversationIsRejected() {
    ChatMessage m = direct("alice", "bob", "hi");
    messages.pipeInput("alice", m);
    assertThat(inbox.isEmpty()).isTrue();
    assertThat(header(rejected.readRecord(), "__streams.errors.message"))
        .contains("must be keyed by its conversationId");
  }

  @Test
  void directConversationIdMustBeCanonical() {
    ChatMessage m = ChatMessage.newBuilder(direct("alice", "bob", "hi")).setConversationId("d:bob:alice").build();
    messages.pipeInput("d:bob:alice", m);
    assertThat(inbox.isEmpty()).isTrue();
    assertThat(header(rejected.readRecord(), "__streams.errors.message"))
        .contains("direct conversationId must be d:alice:bob");
  }

  @Test
  @Tag("slow") // 5,000 joins (seconds): run by verify's unit tests, not once per mutant by PIT
  void largeGroupIsScannedFromTheMembershipStoreNotFromOneBigValue() {
    // Given a group of 5,000 members (each a key of its own in the store)
    for (int i = 0; i < 5_000; i++) {
      join("big", "u" + i);
    }
    inbox.readKeyValuesToList();
    // When u0 writes, then every member gets exactly one entry
    send(group("u0", "big", "hello all"));
    List<String> got = recipients();
    assertThat(got).hasSize(5_000).doesNotHaveDuplicates();
    assertThat(MemberKeys.userId(MemberKeys.key("big", "u42"))).isEqualTo("u42");
  }

  @Test
  void dedupeWindowIsTwentyFourHoursLongNotShorter() {
    ChatMessage first = direct("alice", "bob", "hi");
    send(first);
    inbox.readKeyValuesToList();

    // 23 h 59 min later (inside the 24 h window) the same clientMsgId is still a retry: dropped
    messages.pipeInput(new TestRecord<>(first.getConversationId(),
        ChatMessage.newBuilder(first).setMessageId("retry-1").build(), T0.plus(Duration.ofHours(24).minusMinutes(1))));
    assertThat(inbox.isEmpty()).isTrue();
    assertThat(metrics.duplicates().count()).isEqualTo(1.0);

    // 24 h 1 min after the first (just outside the window) it is a new message
    messages.pipeInput(new TestRecord<>(first.getConversationId(),
        ChatMessage.newBuilder(first).setMessageId("later").build(), T0.plus(Duration.ofHours(24).plusMinutes(1))));
    assertThat(inbox.readValuesToList()).extracting(InboxEntry::getMessageId).containsExactly("later", "later");
    assertThat(inbox.isEmpty()).isTrue();
  }

  @Test
  void recallOfAMessageFromAnotherConversationIsRejectedAndProducesNothing() {
    // Given alice's message in g1 (alice and bob are members)
    join("g1", "alice");
    join("g1", "bob");
    ChatMessage original = group("alice", "g1", "in the group");
    send(original);
    inbox.readKeyValuesToList();

    // When alice sends a RECALL of it in her direct chat with carol
    send(ChatMessage.newBuilder(direct("alice", "carol", null)).setType(MessageType.RECALL)
        .setRefMessageId(original.getMessageId()).build());

    // Then nobody gets a RECALL (carol never saw the message): only alice learns it was refused, and the record is
    // rejected with the reason
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getType() + ":"
        + kv.value.getRejectedOp()).containsExactly("alice:REJECTED:RECALL");
    assertThat(header(rejected.readRecord(), "__streams.errors.message"))
        .contains("but it was sent in another conversation");
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void recallAfterTheRecallWindowIsRejectedAndJustInsideItIsHonoured() {
    // Given two messages from alice to bob: one now (T0), one a day later
    ChatMessage old = direct("alice", "bob", "old");
    ChatMessage newer = direct("alice", "bob", "newer");
    messages.pipeInput(new TestRecord<>(old.getConversationId(), old, T0));
    messages.pipeInput(new TestRecord<>(newer.getConversationId(), newer, T0.plus(Duration.ofDays(1))));
    inbox.readKeyValuesToList();

    // When alice recalls the first 7 days and 1 minute after it was sent (window 7 d)
    ChatMessage lateRecall = ChatMessage.newBuilder(direct("alice", "bob", null)).setType(MessageType.RECALL)
        .setRefMessageId(old.getMessageId()).build();
    messages.pipeInput(new TestRecord<>(lateRecall.getConversationId(), lateRecall,
        T0.plus(Duration.ofDays(7).plusMinutes(1))));

    // Then it is rejected: too late, no RECALL reaches an inbox, only alice learns it was refused
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getType() + ":"
        + kv.value.getRejectedOp()).containsExactly("alice:REJECTED:RECALL");
    assertThat(header(rejected.readRecord(), "__streams.errors.message"))
        .contains("RECALL of unknown message " + old.getMessageId());

    // When she recalls the second 7 days less 1 minute after it was sent (T0 + 8 d - 1 min)
    ChatMessage inTime = ChatMessage.newBuilder(direct("alice", "bob", null)).setType(MessageType.RECALL)
        .setRefMessageId(newer.getMessageId()).build();
    messages.pipeInput(new TestRecord<>(inTime.getConversationId(), inTime,
        T0.plus(Duration.ofDays(8).minusMinutes(1))));

    // Then both parties get the RECALL
    assertThat(inbox.readKeyValuesToList()).extracting(kv -> kv.key + ":" + kv.value.getType() + ":"
        + kv.value.getRefMessageId()).containsExactly("bob:RECALL:" + newer.getMessageId(),
            "alice:RECALL:" + newer.getMessageId());
    assertThat(rejected.isEmpty()).isTrue();
  }

  @Test
  void historyHoldsEachAcceptedMessageAtItsSeqAndATombstoneAtEveryOtherSeqAndTheCountersAgree() {
    // Given g1 = {alice, bob}
    join("g1", "alice");
    join("g1", "bob");
    int entries = inbox.readKeyValuesToList().size();

    // When alice writes (offset 0), repeats it (1), mallory writes uninvited (2), bob writes (3)
    ChatMessage first = group("alice", "g1", "one");
    send(first);
    send(ChatMessage.newBuilder(first).setMessageId("m-again").build());
    send(group("mallory", "g1", "spam"));
    ChatMessage last = group("bob", "g1", "two");
    send(last);

    // Then history has the two accepted messages at their seqs, and nothing (a tombstone) at the others: a minSeq
    // read of history waits for the log's position, so every seq must leave a record
    assertThat(history.readKeyValuesToList()).extracting(kv -> kv.key, kv -> kv.value).containsExactly(
        tuple(HistoryKey.of("g1", 0), first),
        tuple(HistoryKey.of("g1", 1), null),
        tuple(HistoryKey.of("g1", 2), null),
        tuple(HistoryKey.of("g1", 3), last));
    // And the counters say what happened: 2 fanned out, 1 duplicate, 1 rejected, and as many inbox entries as were
    // written (2 joins, 2 x 2 copies, mallory's REJECTED)
    entries += inbox.readKeyValuesToList().size();
    assertThat(entries).isEqualTo(7);
    assertThat(metrics.messages().count()).isEqualTo(2.0);
    assertThat(metrics.duplicates().count()).isEqualTo(1.0);
    assertThat(metrics.rejected().count()).isEqualTo(1.0);
    assertThat(metrics.membershipChanges().count()).isEqualTo(2.0);
    assertThat(metrics.inboxEntries()).isEqualTo(entries);
  }

  @Test
  void aJoinAfterARefusedFirstRecordOfTheLogTakesEffectAfterIt() {
    // Given g1 = {alice}, and the first record of im.messages (offset 0) a refused post of mallory
    join("g1", "alice");
    send(group("mallory", "g1", "spam"));
    inbox.readKeyValuesToList();

    // When bob joins
    join("g1", "bob");

    // Then his history (and a large group's timeline) starts after that record, at seq 1
    List<KeyValue<String, InboxEntry>> out = inbox.readKeyValuesToList();
    assertThat(out).extracting(kv -> kv.key + ":" + kv.value.getType()).containsExactly("bob:CONVERSATION_JOINED");
    assertThat(out.get(0).value.getTimelineFromSeq()).isEqualTo(1L);
  }

  // --- helpers -------------------------------------------------------------------------------------------------

  private void send(ChatMessage m) {
    messages.pipeInput(m.getConversationId(), m);
  }

  private void join(String group, String user) {
    members.pipeInput(group, new MembershipChange(group, user, MembershipOp.JOIN, T0, null, null));
  }

  private void leave(String group, String user) {
    members.pipeInput(group, new MembershipChange(group, user, MembershipOp.LEAVE, T0, null, null));
  }

  private List<String> recipients() {
    return inbox.readKeyValuesToList().stream().map(kv -> kv.key).collect(Collectors.toList());
  }

  private ChatMessage direct(String from, String to, String body) {
    return base(from, body).setConversationId(Ids.direct(from, to)).setConversationType(ConversationType.DIRECT)
        .setRecipientId(to).build();
  }

  private ChatMessage group(String from, String groupId, String body) {
    return base(from, body).setConversationId(groupId).setConversationType(ConversationType.GROUP)
        .setGroupId(groupId).build();
  }

  private ChatMessage.Builder base(String from, String body) {
    int n = ++clientIds;
    return ChatMessage.newBuilder().setMessageId("m-" + n).setClientMsgId("c-" + n).setType(MessageType.MESSAGE)
        .setSenderId(from).setBody(body).setSentAt(T0).setAttributes(Map.of());
  }

  private static String header(TestRecord<byte[], byte[]> record, String name) {
    Header h = record.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }
}
