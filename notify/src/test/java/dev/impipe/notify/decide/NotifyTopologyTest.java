package dev.impipe.notify.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.Ack;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.Notification;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.inbox.conversations.ConversationsConfig;
import dev.impipe.notify.NotifyConfig;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.runtime.streams.RejectedRecord;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import dev.impipe.runtime.streams.PunctuationBudget;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deciding topology driven by explicit wall-clock time from {@code T0}: {@code IM_NOTIFY_AFTER} 10 s,
 * {@code IM_NOTIFY_COALESCE} 60 s (the defaults), the punctuator every 250 ms. An inbox record's offset in the driver
 * is its seq: {@link #message} returns it.
 */
class NotifyTopologyTest {

  private static final String REGISTRY = "mock://notify-decide-test";
  private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
  private static final String DIRECT = "d:alice:bob";

  @TempDir
  Path stateDir;

  private final ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(REGISTRY));
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final NotifyMetrics metrics = new NotifyMetrics(meters);
  private TopologyTestDriver driver;
  private TestInputTopic<String, InboxEntry> inbox;
  private TestInputTopic<String, Ack> acks;
  private TestInputTopic<String, DeviceCursor> cursors;
  private TestInputTopic<String, PushRegistration> registrations;
  private TestOutputTopic<String, Notification> notifications;
  private TestOutputTopic<byte[], byte[]> rejected;
  private long nextSeq;
  private Instant clock = T0;

  @AfterEach
  void close() {
    if (driver != null) {
      driver.close();
    }
    InMemorySchemaRegistry.drop(REGISTRY);
  }

  private void start() {
    start(NotifyConfig.defaults());
  }

  private void start(NotifyConfig cfg) {
    start(cfg, StreamsTestConfig.forDriver("notify-decide-test", topics.names(), stateDir));
  }

  private void start(NotifyConfig cfg, Properties props) {
    driver = new TopologyTestDriver(NotifyTopology.build(topics, cfg, ConversationsConfig.defaults(), metrics,
        new PunctuationBudget(cfg.maxEntriesPerPunctuation(), NotifyTopology.MAX_MS_PER_WINDOW,
            PunctuationBudget.DEFAULT_WINDOW_MS),
        NotifyProcessorTest.FETCHED), props, clock);
    inbox = driver.createInputTopic(topics.inbox().name(), topics.inbox().keySerde().serializer(),
        topics.inbox().valueSerde().serializer());
    acks = driver.createInputTopic(topics.acks().name(), topics.acks().keySerde().serializer(),
        topics.acks().valueSerde().serializer());
    cursors = driver.createInputTopic(topics.deviceCursors().name(), topics.deviceCursors().keySerde().serializer(),
        topics.deviceCursors().valueSerde().serializer());
    registrations = driver.createInputTopic(topics.pushRegistrations().name(),
        topics.pushRegistrations().keySerde().serializer(), topics.pushRegistrations().valueSerde().serializer());
    notifications = driver.createOutputTopic(topics.notifications().name(),
        topics.notifications().keySerde().deserializer(), topics.notifications().valueSerde().deserializer());
    rejected = driver.createOutputTopic(topics.rejected().name(), topics.rejected().keySerde().deserializer(),
        topics.rejected().valueSerde().deserializer());
  }

  @Test
  void anOfflineDeviceGetsExactlyOneNotificationWithTheRightFields() {
    // Given bob's phone registered for Web Push, not connected
    start();
    register("bob", "phone", "r1");

    // When alice's message lands in bob's inbox at 1 s
    long seq = message("bob", DIRECT, "alice", 0, "hello bob", 1_000);

    // Then nothing before IM_NOTIFY_AFTER has passed since the entry (now = 10.75 s)
    advanceTo(10_750);
    assertThat(notifications.isEmpty()).isTrue();
    // now = 11 s: one notification with every field, the badge 1
    advanceTo(11_000);
    assertThat(notifications.readRecordsToList()).containsExactly(new TestRecord<>("bob", Notification.newBuilder()
        .setNotificationId("bob:phone:" + DIRECT + ":" + seq).setUserId("bob").setDeviceId("phone")
        .setConversationId(DIRECT).setConversationType("DIRECT").setSenderId("alice").setPreview("hello bob")
        .setSeq(seq).setCount(1).setUnreadTotal(1L).setEntryAt(at(1_000)).setDecidedAt(at(11_000))
        .setRegistrationId("r1").setProvider("WEBPUSH").setEndpoint("https://push.example/phone")
        .setP256dh("p256dh-phone").setAuth("auth-phone").build(), at(11_000)));
    // and never again: the coalescing window ends at 71 s, then the burst is gone
    advanceTo(40_000);
    advanceTo(72_000);
    advanceTo(200_000);
    assertThat(notifications.isEmpty()).isTrue();
    assertThat(storeSize(NotifyTopology.PENDING_STORE)).isZero();
    assertThat(storeSize(NotifyTopology.DUE_STORE)).isZero();
    assertThat(meters.get(NotifyMetrics.DECIDED).counter().count()).isEqualTo(1);
    assertThat(meters.get(NotifyMetrics.PENDING).gauge().value()).isZero();
  }

  @Test
  void aDeviceThatAcksBeforeItIsDueGetsNone() {
    // Given bob's phone and laptop registered, and alice's message at 1 s
    start();
    register("bob", "phone", "r1");
    register("bob", "laptop", "r2");
    long seq = message("bob", DIRECT, "alice", 0, "hi", 1_000);
    assertThat(meters.get(NotifyMetrics.PENDING).gauge().value()).isEqualTo(2);

    // When the phone ACKs it over its socket at 2 s
    advanceTo(2_000);
    acks.pipeInput("bob", Ack.newBuilder().setUserId("bob").setDeviceId("phone").setSeq(seq).setAckedAt(at(2_000))
        .build(), at(2_000));

    // and his tablet, which has no registration, ACKs too
    acks.pipeInput("bob", Ack.newBuilder().setUserId("bob").setDeviceId("tablet").setSeq(seq).setAckedAt(at(2_000))
        .build(), at(2_000));

    // Then only the laptop is notified at 11 s
    advanceTo(11_000);
    assertThat(notifications.readValuesToList()).extracting(Notification::getDeviceId).containsExactly("laptop");
    advanceTo(100_000);
    assertThat(notifications.isEmpty()).isTrue();
    // and only registered devices' receipts are kept
    assertThat(storeSize(NotifyTopology.RECEIVED_STORE)).isEqualTo(1);
  }

  @Test
  void aCursorCommitAtOrPastTheSeqCountsAsReceived() {
    // Given bob's phone and two messages at 1 s and 2 s
    start();
    register("bob", "phone", "r1");
    long first = message("bob", DIRECT, "alice", 0, "one", 1_000);
    long second = message("bob", DIRECT, "alice", 1, "two", 2_000);

    // When the phone syncs up to the first one (now = 5 s)
    advanceTo(5_000);
    cursors.pipeInput("bob", DeviceCursor.newBuilder().setUserId("bob").setDeviceId("phone").setSeq(first).build(),
        at(5_000));

    // Then the second one alone is notified, IM_NOTIFY_AFTER after its own entry (12 s), not at 11 s: the burst's
    // one due entry moved
    assertThat(storeSize(NotifyTopology.DUE_STORE)).isEqualTo(1);
    advanceTo(11_000);
    assertThat(notifications.isEmpty()).isTrue();
    advanceTo(12_000);
    assertThat(notifications.readValuesToList()).singleElement().satisfies(n -> {
      assertThat(n.getCount()).isEqualTo(1);
      assertThat(n.getSeq()).isEqualTo(second);
      assertThat(n.getPreview()).isEqualTo("two");
    });

    // When it syncs past everything before the next message: nothing more
    cursors.pipeInput("bob", DeviceCursor.newBuilder().setUserId("bob").setDeviceId("phone").setSeq(second + 5)
        .build(), at(13_000));
    message("bob", DIRECT, "alice", 2, "three", 13_000);
    advanceTo(200_000);
    assertThat(notifications.isEmpty()).isTrue();
  }

  @Test
  void whileTheInputsAreBehindABurstWaitsForTheAcksThatCouldCancelIt() {
    // Given bob's phone, and alice's message written at 1 s
    start();
    register("bob", "phone", "r1");
    long seq = message("bob", DIRECT, "alice", 0, "hi", 1_000);

    // When the app reads a backlog: until now = 12 s it keeps reading records written at 1.5 s (other users'
    // cursors), then the phone's ACK written at 2 s
    for (long wall = 500; wall <= 12_000; wall += 500) {
      advanceTo(wall);
      cursors.pipeInput("carol", DeviceCursor.newBuilder().setUserId("carol").setDeviceId("tablet").setSeq(1).build(),
          at(1_500));
    }
    assertThat(notifications.isEmpty()).isTrue();
    acks.pipeInput("bob", Ack.newBuilder().setUserId("bob").setDeviceId("phone").setSeq(seq).setAckedAt(at(2_000))
        .build(), at(2_000));

    // Then the ACK wins: no notification, though the burst was due at 11 s by the wall clock
    advanceTo(100_000);
    assertThat(notifications.isEmpty()).isTrue();
  }

  @Test
  void aBurstOfFiveIsOneNotificationWithCountFive() {
    // Given bob's phone; five messages from alice between 1 s and 5 s
    start();
    register("bob", "phone", "r1");
    long first = message("bob", DIRECT, "alice", 0, "m0", 1_000);
    for (int i = 1; i < 4; i++) {
      message("bob", DIRECT, "alice", i, "m" + i, 1_000 + i * 1_000);
    }
    long last = message("bob", DIRECT, "alice", 4, "m4", 5_000);

    // When the first one is IM_NOTIFY_AFTER old (11 s)
    advanceTo(11_000);

    // Then one notification covers all five: named by the first, showing the newest
    assertThat(notifications.readValuesToList()).singleElement().satisfies(n -> {
      assertThat(n.getCount()).isEqualTo(5);
      assertThat(n.getNotificationId()).isEqualTo("bob:phone:" + DIRECT + ":" + first);
      assertThat(n.getSeq()).isEqualTo(last);
      assertThat(n.getPreview()).isEqualTo("m4");
      assertThat(n.getEntryAt()).isEqualTo(at(1_000));
      assertThat(n.getUnreadTotal()).isEqualTo(5);
    });
    advanceTo(200_000);
    assertThat(notifications.isEmpty()).isTrue();
  }

  @Test
  void aBurstAcrossTheCoalescingWindowIsTwoNotificationsWithTheirCounts() {
    // Given three messages at 1-3 s, notified at 11 s
    start();
    register("bob", "phone", "r1");
    for (int i = 0; i < 3; i++) {
      message("bob", DIRECT, "alice", i, "m" + i, 1_000 + i * 1_000);
    }
    advanceTo(11_000);
    assertThat(notifications.readValuesToList()).extracting(Notification::getCount).containsExactly(3);

    // When two more come at 30 s and 31 s, inside the window that ends at 71 s
    advanceTo(30_000);
    long fourth = message("bob", DIRECT, "alice", 3, "m3", 30_000);
    message("bob", DIRECT, "alice", 4, "m4", 31_000);

    // Then they wait for the window's end (70.75 s: nothing), and are one notification of 2 at 71 s
    advanceTo(70_750);
    assertThat(notifications.isEmpty()).isTrue();
    advanceTo(71_000);
    assertThat(notifications.readValuesToList()).singleElement().satisfies(n -> {
      assertThat(n.getCount()).isEqualTo(2);
      assertThat(n.getNotificationId()).isEqualTo("bob:phone:" + DIRECT + ":" + fourth);
      assertThat(n.getEntryAt()).isEqualTo(at(30_000));
    });
    advanceTo(300_000);
    assertThat(notifications.isEmpty()).isTrue();
  }

  @Test
  void oneNotificationPerConversationAndTheBadgeCountsThemAll() {
    // Given bob's phone; two messages from alice and one in group g1 (bob joined it)
    start();
    register("bob", "phone", "r1");
    entry("bob", InboxEntry.newBuilder().setUserId("bob").setType(InboxEntryType.CONVERSATION_JOINED)
        .setConversationId("g1").setConversationSeq(-1).setTimelineFromSeq(0L).setTimestamp(at(500)), 500);
    message("bob", DIRECT, "alice", 0, "a0", 1_000);
    message("bob", DIRECT, "alice", 1, "a1", 1_500);
    message("bob", "g1", "carol", 0, "c0", 2_000);

    // When both are due (now = 12 s)
    advanceTo(12_000);

    // Then one notification per conversation, each with the badge of 3
    assertThat(notifications.readValuesToList())
        .extracting(Notification::getConversationId, Notification::getConversationType, Notification::getCount,
            Notification::getUnreadTotal)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(DIRECT, "DIRECT", 2, 3L),
            org.assertj.core.groups.Tuple.tuple("g1", "GROUP", 1, 3L));
  }

  @Test
  void theUsersOwnMessagesOtherEntryTypesAndGroupTimelinesNotifyNone() {
    // Given bob's phone
    start();
    register("bob", "phone", "r1");
    register("#g1", "phone", "r9"); // a key no user has; a timeline's entries never look it up

    // When bob's own message, alice's read receipt, a join, a rejection and a large group's timeline entry arrive
    message("bob", DIRECT, "bob", 0, "mine", 1_000);
    entry("bob", base("bob", InboxEntryType.READ, DIRECT).setSenderId("alice").setReadUpToSeq(0L), 1_100);
    entry("bob", base("bob", InboxEntryType.CONVERSATION_JOINED, "g2").setTimelineFromSeq(0L), 1_200);
    entry("bob", base("bob", InboxEntryType.REJECTED, DIRECT).setReason("no"), 1_300);
    entry("bob", base("bob", InboxEntryType.UNKNOWN, DIRECT), 1_400);
    message("#g1", "g1", "carol", 0, "to the timeline", 1_500);

    // Then nothing, ever
    advanceTo(100_000);
    assertThat(notifications.isEmpty()).isTrue();
    assertThat(storeSize(NotifyTopology.PENDING_STORE)).isZero();
  }

  @Test
  void aMutedConversationNotifiesNone() {
    // Given bob muted the conversation with alice
    start();
    register("bob", "phone", "r1");
    entry("bob", base("bob", InboxEntryType.CONVERSATION_SETTINGS, DIRECT).setMuted(true), 500);

    // When alice writes
    message("bob", DIRECT, "alice", 0, "hi", 1_000);

    // Then nothing
    advanceTo(100_000);
    assertThat(notifications.isEmpty()).isTrue();
  }

  @Test
  void aConversationMutedAfterTheMessageButBeforeItIsDueNotifiesNone() {
    // Given alice's message at 1 s
    start();
    register("bob", "phone", "r1");
    message("bob", DIRECT, "alice", 0, "hi", 1_000);

    // When bob mutes the conversation at 5 s (on another device)
    entry("bob", base("bob", InboxEntryType.CONVERSATION_SETTINGS, DIRECT).setMuted(true), 5_000);

    // Then nothing at 11 s, nor later
    advanceTo(11_000);
    advanceTo(100_000);
    assertThat(notifications.isEmpty()).isTrue();
    assertThat(storeSize(NotifyTopology.PENDING_STORE)).isZero();
  }

  @Test
  void aRecallBeforeItIsDueTakesTheMessageOut() {
    // Given two messages from alice at 1 s and 2 s
    start();
    register("bob", "phone", "r1");
    message("bob", DIRECT, "alice", 0, "one", 1_000);
    message("bob", DIRECT, "alice", 1, "two", 2_000);

    // When she recalls the second at 3 s
    entry("bob", base("bob", InboxEntryType.RECALL, DIRECT).setSenderId("alice").setRefMessageId("msg-1"), 3_000);

    // Then the notification covers the first only, without the recalled body
    advanceTo(11_000);
    assertThat(notifications.readValuesToList()).singleElement().satisfies(n -> {
      assertThat(n.getCount()).isEqualTo(1);
      assertThat(n.getPreview()).isNull();
      assertThat(n.getSenderId()).isEqualTo("alice");
    });
  }

  @Test
  void aRecallOfTheOnlyMessageBeforeItIsDueMeansNone() {
    start();
    register("bob", "phone", "r1");
    message("bob", DIRECT, "alice", 0, "oops", 1_000);
    entry("bob", base("bob", InboxEntryType.RECALL, DIRECT).setSenderId("alice").setRefMessageId("msg-0"), 3_000);
    advanceTo(100_000);
    assertThat(notifications.isEmpty()).isTrue();
    assertThat(storeSize(NotifyTopology.DUE_STORE)).isZero();
  }

  @Test
  void readingPartOfABurstElsewhereLeavesTheRest() {
    // Given two messages from alice at 1 s and 2 s (conversation seqs 0 and 1)
    start();
    register("bob", "phone", "r1");
    message("bob", DIRECT, "alice", 0, "one", 1_000);
    long second = message("bob", DIRECT, "alice", 1, "two", 2_000);

    // When bob reads the first one on his laptop at 3 s
    entry("bob", base("bob", InboxEntryType.READ, DIRECT).setSenderId("bob").setReadUpToSeq(0L), 3_000);

    // Then the phone is notified about the second, 10 s after it was written
    advanceTo(11_000);
    assertThat(notifications.isEmpty()).isTrue();
    advanceTo(12_000);
    assertThat(notifications.readValuesToList()).singleElement().satisfies(n -> {
      assertThat(n.getCount()).isEqualTo(1);
      assertThat(n.getSeq()).isEqualTo(second);
      assertThat(n.getUnreadTotal()).isEqualTo(1);
    });
  }

  @Test
  void aMessageAlreadyReadOrReceivedWhenItsEntryArrivesNotifiesNone() {
    // Given bob's phone; bob has read the conversation up to seq 3 on his laptop, and the phone's ACK of the next
    // inbox seq overtook its entry (another topic)
    start();
    register("bob", "phone", "r1");
    entry("bob", base("bob", InboxEntryType.READ, DIRECT).setSenderId("bob").setReadUpToSeq(3L), 500);
    acks.pipeInput("bob", Ack.newBuilder().setUserId("bob").setDeviceId("phone").setSeq(nextSeq + 1)
        .setAckedAt(at(600)).build(), at(600));

    // When the entries of conversation seq 3 (read) and 4 (received) arrive, then seq 5 (neither)
    message("bob", DIRECT, "alice", 3, "read", 1_000);
    message("bob", DIRECT, "alice", 4, "received", 1_100);
    long third = message("bob", DIRECT, "alice", 5, "neither", 1_200);

    // Then only the last one is notified
    advanceTo(20_000);
    assertThat(notifications.readValuesToList()).singleElement().satisfies(n -> {
      assertThat(n.getCount()).isEqualTo(1);
      assertThat(n.getSeq()).isEqualTo(third);
    });
  }

  @Test
  void readingOnAnotherDeviceBeforeItIsDueMeansNone() {
    // Given bob's phone, offline, and alice's message at 1 s (conversation seq 0)
    start();
    register("bob", "phone", "r1");
    message("bob", DIRECT, "alice", 0, "hi", 1_000);

    // When bob reads it on his laptop at 4 s
    entry("bob", base("bob", InboxEntryType.READ, DIRECT).setSenderId("bob").setReadUpToSeq(0L), 4_000);

    // Then the phone gets nothing
    advanceTo(100_000);
    assertThat(notifications.isEmpty()).isTrue();
  }

  @Test
  void aRemovedRegistrationGetsNoneAndARemovalOfAnOlderOneChangesNothing() {
    // Given bob's phone (registration r1) and laptop (r2), and alice's message at 1 s
    start();
    register("bob", "phone", "r1");
    register("bob", "laptop", "r2");
    message("bob", DIRECT, "alice", 0, "hi", 1_000);

    // When the phone's r1 is removed (a 410), and a late removal of an older laptop registration r0 arrives
    remove("bob", "phone", "r1", 2_000);
    remove("bob", "laptop", "r0", 2_100);
    KeyValueStore<Bytes, byte[]> pending = driver.getKeyValueStore(NotifyTopology.PENDING_STORE);
    assertThat(pending.get(NotifyKeys.pending("bob", "phone", DIRECT))).isNull();
    assertThat(pending.get(NotifyKeys.pending("bob", "laptop", DIRECT))).isNotNull();

    // Then only the laptop is notified
    advanceTo(11_000);
    assertThat(notifications.readValuesToList()).extracting(Notification::getDeviceId, Notification::getRegistrationId)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("laptop", "r2"));
    KeyValueStore<String, PushRegistration> store = driver.getKeyValueStore(NotifyTopology.REGISTRATIONS_STORE);
    assertThat(store.get(RegistrationKeys.key("bob", "phone"))).isNull();
    assertThat(store.get(RegistrationKeys.key("bob", "laptop")).getRegistrationId()).isEqualTo("r2");

    // When the phone registers again (r5), syncs, and is removed again: what it had received goes too
    register("bob", "phone", "r5");
    cursors.pipeInput("bob", DeviceCursor.newBuilder().setUserId("bob").setDeviceId("phone").setSeq(100).build(),
        at(12_000));
    assertThat(storeSize(NotifyTopology.RECEIVED_STORE)).isEqualTo(1);
    remove("bob", "phone", "r5", 12_100);
    assertThat(storeSize(NotifyTopology.RECEIVED_STORE)).isZero();
  }

  @Test
  void aNewerRegistrationReplacesTheDevicesAndAnUnknownProviderGetsNone() {
    // Given bob's phone registered twice (r1 then r2), and carol's with a provider this build does not know
    start();
    register("bob", "phone", "r1");
    register("bob", "phone", "r2");
    registrations.pipeInput("carol", registration("carol", "phone", "r3").setProvider(PushProvider.UNKNOWN).build(),
        at(0));
    message("bob", DIRECT, "alice", 0, "hi", 1_000);
    message("carol", "d:alice:carol", "alice", 0, "hi", 1_000);

    // Then bob's phone is notified through r2, carol's not at all
    advanceTo(100_000);
    assertThat(notifications.readValuesToList()).extracting(Notification::getUserId, Notification::getRegistrationId)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("bob", "r2"));
  }

  @Test
  void withPreviewsOffThereIsNoPreview() {
    start(NotifyConfig.fromEnv(Map.of("IM_NOTIFY_PREVIEW_CHARS", "0")));
    register("bob", "phone", "r1");
    message("bob", DIRECT, "alice", 0, "secret", 1_000);
    advanceTo(11_000);
    assertThat(notifications.readValuesToList()).singleElement()
        .satisfies(n -> assertThat(n.getPreview()).isNull());
  }

  @Test
  void aRestartKeepsPendingBurstsAndRegistrations() {
    // Given bob's phone and alice's message at 1 s
    start();
    register("bob", "phone", "r1");
    message("bob", DIRECT, "alice", 0, "before", 1_000);

    // When the app stops at 5 s and a new instance starts on the state it had committed (a test driver deletes its
    // state dir when closed: the new one gets a copy of every store, as a restart restoring the changelogs does)
    advanceTo(5_000);
    TopologyTestDriver old = driver;
    start(NotifyConfig.defaults(), StreamsTestConfig.forDriver("notify-decide-test", topics.names(),
        stateDir.resolve("restarted")));
    copyStores(old, driver);
    old.close();

    // Then the burst is notified at 11 s as if nothing happened
    advanceTo(11_000);
    assertThat(notifications.readValuesToList()).extracting(Notification::getPreview).containsExactly("before");
    // and the registration is still there for the next message (another conversation)
    message("bob", "d:bob:carol", "carol", 0, "after", 20_000);
    advanceTo(30_000);
    assertThat(notifications.readValuesToList()).extracting(Notification::getPreview).containsExactly("after");
  }

  @Test
  void badRecordsDoNotStopIt() {
    // Given bob's phone
    start();
    register("bob", "phone", "r1");
    TestInputTopic<byte[], byte[]> rawInbox = driver.createInputTopic(topics.inbox().name(),
        new ByteArraySerializer(), new ByteArraySerializer());
    TestInputTopic<byte[], byte[]> rawRegistrations = driver.createInputTopic(topics.pushRegistrations().name(),
        new ByteArraySerializer(), new ByteArraySerializer());

    // When an undecodable inbox record, an undecodable registration, one keyed by another user and one with a
    // separator in its device id arrive, then alice's message
    rawInbox.pipeInput("bob".getBytes(StandardCharsets.UTF_8), new byte[] {0, 0, 0, 0, 9, 9}, at(100));
    nextSeq++;
    rawRegistrations.pipeInput("bob".getBytes(StandardCharsets.UTF_8), new byte[] {1, 2, 3}, at(200));
    registrations.pipeInput("mallory", registration("bob", "tablet", "r7").build(), at(300));
    registrations.pipeInput("bob", registration("bob", "ta|blet", "r8").build(), at(400));
    message("bob", DIRECT, "alice", 0, "still here", 1_000);

    // Then the two registrations the topology refuses are in im.rejected with their reason, and bob is notified
    assertThat(rejected.readRecordsToList()).extracting(r -> new String(r.key(), StandardCharsets.UTF_8),
        r -> new String(r.headers().lastHeader(RejectedHeaders.CODE).value(), StandardCharsets.UTF_8))
        .containsExactly(org.assertj.core.groups.Tuple.tuple("mallory", RejectedRecord.INVALID),
            org.assertj.core.groups.Tuple.tuple("bob", RejectedRecord.INVALID));
    advanceTo(11_000);
    assertThat(notifications.readValuesToList()).extracting(Notification::getPreview).containsExactly("still here");
  }

  @Test
  void aPendingBurstThatDoesNotDecodeIsQuarantinedAndTheOthersGoOn() {
    // Given bob's and dave's phones with a message each, bob's burst corrupt in the store
    start();
    register("bob", "phone", "r1");
    register("dave", "phone", "r2");
    message("bob", DIRECT, "alice", 0, "b", 1_000);
    message("dave", "d:alice:dave", "alice", 0, "d", 1_000);
    KeyValueStore<Bytes, byte[]> pending = driver.getKeyValueStore(NotifyTopology.PENDING_STORE);
    Bytes bad = NotifyKeys.pending("bob", "phone", DIRECT);
    pending.put(bad, new byte[] {9, 9, 9});

    // When both are due
    advanceTo(11_000);

    // Then dave is notified; bob's burst went to im.rejected with its bytes and left the stores
    assertThat(notifications.readValuesToList()).extracting(Notification::getUserId).containsExactly("dave");
    assertThat(rejected.readRecordsToList()).singleElement().satisfies(r -> {
      assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("bob");
      assertThat(r.value()).containsExactly(9, 9, 9);
      assertThat(new String(r.headers().lastHeader(RejectedHeaders.STORE).value(), StandardCharsets.UTF_8))
          .isEqualTo(NotifyTopology.PENDING_STORE);
    });
    assertThat(pending.get(bad)).isNull();
  }

  @Test
  void aRoundDecidesAtMostTheBudgetAndTheRestFollows() {
    // Given at most 2 decisions per window, and three users' messages due at 11 s
    start(NotifyConfig.fromEnv(Map.of("IM_NOTIFY_MAX_ENTRIES_PER_PUNCTUATION", "2")));
    for (String user : List.of("u1", "u2", "u3")) {
      register(user, "phone", "r-" + user);
      message(user, "d:alice:" + user, "alice", 0, "hi", 1_000);
    }

    // When the round at 11 s runs: two, oldest first (same time: key order)
    advanceTo(11_000);
    assertThat(notifications.readValuesToList()).extracting(Notification::getUserId).containsExactly("u1", "u2");
    // Then the catch-up round a window later decides the third
    advanceTo(11_100);
    assertThat(notifications.readValuesToList()).extracting(Notification::getUserId).containsExactly("u3");
  }

  // ---- helpers

  private void register(String user, String device, String registrationId) {
    registrations.pipeInput(user, registration(user, device, registrationId).build(), clock);
  }

  private void remove(String user, String device, String registrationId, long atMs) {
    registrations.pipeInput(user, registration(user, device, registrationId).setRemoved(true)
        .setRemovedReason("gone").build(), at(atMs));
  }

  private PushRegistration.Builder registration(String user, String device, String registrationId) {
    return PushRegistration.newBuilder().setUserId(user).setDeviceId(device).setRegistrationId(registrationId)
        .setProvider(PushProvider.WEBPUSH).setEndpoint("https://push.example/" + device)
        .setP256dh("p256dh-" + device).setAuth("auth-" + device).setAt(clock);
  }

  /** A MESSAGE entry in {@code user}'s inbox (messageId {@code msg-<conversationSeq>}); returns its seq. */
  private long message(String user, String conversation, String sender, long conversationSeq, String body,
      long atMs) {
    return entry(user, base(user, InboxEntryType.MESSAGE, conversation).setConversationSeq(conversationSeq)
        .setMessageId("msg-" + conversationSeq).setSenderId(sender).setBody(body), atMs);
  }

  private static InboxEntry.Builder base(String user, InboxEntryType type, String conversation) {
    return InboxEntry.newBuilder().setUserId(user).setType(type).setConversationId(conversation)
        .setConversationSeq(-1).setTimestamp(T0);
  }

  /** Pipes an entry written at {@code atMs}; returns its seq (the record's offset). */
  private long entry(String user, InboxEntry.Builder e, long atMs) {
    inbox.pipeInput(user, e.setTimestamp(at(atMs)).build(), at(atMs));
    return nextSeq++;
  }

  private void advanceTo(long ms) {
    Instant target = at(ms);
    driver.advanceWallClockTime(Duration.between(clock, target));
    clock = target;
  }

  private static Instant at(long ms) {
    return T0.plusMillis(ms);
  }

  private static void copyStores(TopologyTestDriver from, TopologyTestDriver to) {
    for (String name : List.of(NotifyTopology.REGISTRATIONS_STORE, NotifyTopology.RECEIVED_STORE,
        NotifyTopology.PENDING_STORE, NotifyTopology.DUE_STORE, NotifyTopology.CONVERSATIONS_STORE,
        NotifyTopology.CONVERSATION_TOTALS_STORE)) {
      KeyValueStore<Object, Object> target = to.getKeyValueStore(name);
      try (KeyValueIterator<Object, Object> it = from.<Object, Object>getKeyValueStore(name).all()) {
        it.forEachRemaining(kv -> target.put(kv.key, kv.value));
      }
    }
  }

  private long storeSize(String name) {
    KeyValueStore<Bytes, byte[]> store = driver.getKeyValueStore(name);
    long n = 0;
    try (KeyValueIterator<Bytes, byte[]> it = store.all()) {
      while (it.hasNext()) {
        KeyValue<Bytes, byte[]> ignored = it.next();
        n++;
      }
    }
    return n;
  }
}
