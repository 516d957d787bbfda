package dev.impipe.notify.decide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.impipe.avro.Ack;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.Notification;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.inbox.conversations.ConversationKeys;
import dev.impipe.inbox.conversations.ConversationState;
import dev.impipe.notify.NotifyConfig;
import dev.impipe.runtime.streams.InputLag;
import dev.impipe.runtime.streams.PunctuationBudget;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import dev.impipe.testkit.CountingStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The decider's shell over a {@link MockProcessorContext} with in-memory stores (defaults: notify 10 s after a
 * message, at most once per 60 s per device and conversation). Wall-clock time is set explicitly before each step.
 * The whole topology: {@link NotifyTopologyTest}.
 */
class NotifyProcessorTest {

  /** Every input fetched to its end: the idle rule applies from the start (the tests of the other rules). */
  static final InputLag FETCHED = (topic, partition, asOf) -> Optional.of(new InputLag.Ends(0, 0));

  private static final List<String> INPUTS = List.of("im.inbox", "im.acks", "im.device-cursors",
      "im.push-registrations");
  private static final Instant T0 = Instant.EPOCH;
  private static final String DIRECT = "d:alice:bob";

  private final String registryUrl = "mock://notify-processor-" + UUID.randomUUID();
  private final ImTopics topics =
      new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(registryUrl));
  private final MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
  private final NotifyMetrics metrics = NotifyMetrics.discarding();
  private final KeyValueStore<Bytes, byte[]> pending = bytesStore(NotifyTopology.PENDING_STORE);
  private final KeyValueStore<Bytes, byte[]> conversations = bytesStore(NotifyTopology.CONVERSATIONS_STORE);
  /** Store calls to notify-received, by method name. */
  private final List<String> receivedCalls = new ArrayList<>();
  private NotifyProcessor processor;
  private InputLag lag = FETCHED;
  private long offset;

  @AfterEach
  void tearDown() {
    InMemorySchemaRegistry.drop(registryUrl);
  }

  @Test
  void thePunctuatorRunsEveryQuarterOfIMNotifyAfterAtMost250Ms() {
    assertThat(NotifyProcessor.periodMs(NotifyConfig.fromEnv(Map.of("IM_NOTIFY_AFTER", "400ms")))).isEqualTo(100);
    assertThat(NotifyProcessor.periodMs(NotifyConfig.fromEnv(Map.of("IM_NOTIFY_AFTER", "100ms")))).isEqualTo(25);
    assertThat(NotifyProcessor.periodMs(NotifyConfig.defaults())).isEqualTo(250);
  }

  @Test
  void theTasksPendingCountStartsFromItsStoreAndLeavesTheGaugeOnClose() {
    pending.put(NotifyKeys.pending("bob", "phone", "c1"), new byte[] {1});
    pending.put(NotifyKeys.pending("bob", "phone", "c2"), new byte[] {1});

    start(budget(100));
    assertThat(metrics.pending()).isEqualTo(2);

    processor.close();
    assertThat(metrics.pending()).isZero();
  }

  @Test
  void aMessageTheUserHasAlreadyReadOrInAMutedConversationIsNotPending() {
    start(budget(100));
    register("bob", "phone");
    // bob read the direct conversation up to seq 4 on another device
    state("bob", DIRECT, false, 4);
    state("bob", "g1", true, -1);

    message("bob", DIRECT, 4, 1_000);
    message("bob", "g1", 0, 1_000);
    assertThat(metrics.pending()).isZero();

    message("bob", DIRECT, 5, 1_000);
    assertThat(metrics.pending()).isEqualTo(1);
  }

  @Test
  void receiptsAndEntriesOfIdsThatCannotBeRegisteredAreSkipped() {
    start(budget(100));
    register("bob", "phone");

    assertThatCode(() -> {
      ack("|bob", "|bob", "phone", 5, 1_000);
      ack("bob", "bob", "|phone", 5, 1_000);
      message("|bob", DIRECT, 0, 1_000);
    }).doesNotThrowAnyException();
    assertThat(metrics.pending()).isZero();
    assertThat(receivedCalls).doesNotContain("put");
  }

  @Test
  void aReceiptNoNewerThanTheLastOneWritesNothing() {
    start(budget(100));
    register("bob", "phone");
    ack("bob", "bob", "phone", 5, 1_000);
    assertThat(receivedCalls).containsOnlyOnce("put");

    ack("bob", "bob", "phone", 5, 2_000);
    ack("bob", "bob", "phone", 4, 2_000);

    assertThat(receivedCalls).containsOnlyOnce("put");
  }

  @Test
  void afterAStartADueBurstWaitsForTheBacklogToBeFetchedNotJustForAnIdleSecond() {
    // Given a restart whose backlog in im.acks is not fetched yet (a slow first fetch)
    long[] acksFetched = {0};
    lag = (topic, partition, asOf) -> Optional.of(topic.equals("im.acks") ? new InputLag.Ends(1, acksFetched[0])
        : new InputLag.Ends(0, 0));
    start(budget(100));
    register("bob", "phone");
    long seq = message("bob", DIRECT, 0, 1_000);

    // When the burst is due (11 s) and nothing has come for far longer than the idle second
    punctuate(30_000);

    // Then it is not decided: the ACK that cancels it may be in the backlog, and it is
    assertThat(notifications()).isEmpty();
    acksFetched[0] = 1;
    ack("bob", "bob", "phone", seq, 30_100);
    punctuate(40_000);
    assertThat(notifications()).isEmpty();
    assertThat(metrics.pending()).isZero();
  }

  @Test
  void whenTheBacklogCannotBeKnownTheIdleRuleWaitsAMinuteAfterTheStart() {
    lag = InputLag.UNKNOWN;
    start(budget(100));
    register("bob", "phone");
    message("bob", DIRECT, 0, 1_000);

    punctuate(InputHorizon.BACKLOG_WAIT_MS - 1);
    assertThat(notifications()).isEmpty();
    punctuate(InputHorizon.BACKLOG_WAIT_MS);
    assertThat(notifications()).hasSize(1);
  }

  @Test
  void aBurstEmptiedAfterItsCoalescingWindowEndedIsForgotten() {
    start(budget(100));
    register("bob", "phone");
    // 1 s: a message; 11 s: notified, the coalescing window runs to 71 s
    message("bob", DIRECT, 0, 1_000);
    punctuate(11_000);
    assertThat(notifications()).hasSize(1);
    // 20 s: another message, held back by the window
    long second = message("bob", DIRECT, 1, 20_000);
    assertThat(metrics.pending()).isEqualTo(1);

    // When the phone receives it at 80 s, after the window ended
    ack("bob", "bob", "phone", second, 80_000);

    // Then nothing is left to wait for
    assertThat(metrics.pending()).isZero();
    assertThat(pending.approximateNumEntries()).isZero();
  }

  @Test
  void aRoundCutByTheBudgetSchedulesOneCatchUpUntilTheBacklogIsDone() {
    // At most one decision per 100 ms window
    start(budget(1));
    for (String user : List.of("u1", "u2", "u3")) {
      register(user, "phone");
      message(user, "d:alice:" + user, 0, 1_000);
    }
    assertThat(context.scheduledPunctuators()).hasSize(1);

    // 11 s: one decided, the catch-up punctuator starts
    punctuate(11_000);
    assertThat(context.scheduledPunctuators()).hasSize(2);
    // 11.1 s: the second, still more: no second catch-up
    punctuate(11_100);
    assertThat(context.scheduledPunctuators()).hasSize(2);
    assertThat(context.scheduledPunctuators().get(1).cancelled()).isFalse();
    // 11.2 s: the last one, nothing more: the catch-up stops, the regular punctuator goes on
    punctuate(11_200);
    assertThat(notifications()).extracting(Notification::getUserId).containsExactly("u1", "u2", "u3");
    assertThat(context.scheduledPunctuators().get(1).cancelled()).isTrue();
    assertThat(context.scheduledPunctuators().get(0).cancelled()).isFalse();
    punctuate(11_300);
    assertThat(context.scheduledPunctuators()).hasSize(2);
  }

  // ---- helpers

  private static PunctuationBudget budget(long records) {
    return new PunctuationBudget(records, 60_000, PunctuationBudget.DEFAULT_WINDOW_MS);
  }

  private void start(PunctuationBudget budget) {
    KeyValueStore<String, PushRegistration> registrations = Stores.keyValueStoreBuilder(
        Stores.inMemoryKeyValueStore(NotifyTopology.REGISTRATIONS_STORE), Serdes.String(),
        topics.pushRegistrations().valueSerde()).withLoggingDisabled().build();
    registrations.init(context.getStateStoreContext(), registrations);
    context.addStateStore(registrations);
    context.addStateStore(CountingStore.of(bytesStore(NotifyTopology.RECEIVED_STORE), receivedCalls));
    context.addStateStore(pending);
    context.addStateStore(bytesStore(NotifyTopology.DUE_STORE));
    context.addStateStore(conversations);
    context.addStateStore(bytesStore(NotifyTopology.CONVERSATION_TOTALS_STORE));
    context.setCurrentSystemTimeMs(0);
    processor = new NotifyProcessor(NotifyConfig.defaults(), metrics, budget, new BacklogProbe(INPUTS, lag));
    processor.init(context);
  }

  private KeyValueStore<Bytes, byte[]> bytesStore(String name) {
    KeyValueStore<Bytes, byte[]> store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name),
        Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled().build();
    store.init(context.getStateStoreContext(), store);
    return store;
  }

  private void register(String user, String device) {
    process(user, PushRegistration.newBuilder().setUserId(user).setDeviceId(device).setRegistrationId("r-" + user)
        .setProvider(PushProvider.WEBPUSH).setEndpoint("https://push.example/" + device).setP256dh("p256dh")
        .setAuth("auth").setAt(T0).build(), 0);
  }

  private void state(String user, String conversation, boolean muted, long readUpToSeq) {
    conversations.put(ConversationKeys.state(user, conversation), new ConversationState(true, false, 0, readUpToSeq,
        0, 0, -1, null, muted, false, 0, 0).encode());
  }

  /** A MESSAGE entry from alice in {@code user}'s inbox at {@code atMs}; returns its seq (the record's offset). */
  private long message(String user, String conversation, long conversationSeq, long atMs) {
    long seq = offset++;
    context.setRecordMetadata("im.inbox", 0, seq);
    process(user, InboxEntry.newBuilder().setUserId(user).setType(InboxEntryType.MESSAGE)
        .setConversationId(conversation).setConversationSeq(conversationSeq).setMessageId("msg-" + conversationSeq)
        .setSenderId("alice").setBody("hi").setTimestamp(T0.plusMillis(atMs)).build(), atMs);
    return seq;
  }

  private void ack(String key, String user, String device, long seq, long atMs) {
    process(key, Ack.newBuilder().setUserId(user).setDeviceId(device).setSeq(seq).setAckedAt(T0.plusMillis(atMs))
        .build(), atMs);
  }

  private void process(String key, Object value, long atMs) {
    context.setCurrentSystemTimeMs(atMs);
    processor.process(new Record<>(key, value, atMs));
  }

  private void punctuate(long atMs) {
    context.setCurrentSystemTimeMs(atMs);
    processor.punctuate(atMs);
  }

  private List<Notification> notifications() {
    return context.forwarded().stream().map(f -> f.record().value()).filter(Notification.class::isInstance)
        .map(Notification.class::cast).toList();
  }
}
