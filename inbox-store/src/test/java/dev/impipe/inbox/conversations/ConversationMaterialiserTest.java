package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.inbox.query.StoreView;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The list's processor alone on a TopologyTestDriver: the unread index cap, replays, timelines, bad records. */
class ConversationMaterialiserTest {

  private static final String REGISTRY = "mock://conversation-materialiser-test";
  private static final Instant T = Instant.parse("2026-11-22T10:00:00Z");
  private static final String CHAT = "d:alice:bob";
  /** A totals store as notify's copy keeps one (the inbox store's list sums its badge from the states). */
  private static final String TOTALS = "test-conversation-totals";

  @TempDir
  Path stateDir;

  private ImTopics topics;
  private TopologyTestDriver driver;
  private TestInputTopic<String, InboxEntry> inbox;

  @BeforeEach
  void setUp() {
    topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope(REGISTRY));
    // At most 2 unread messages indexed per conversation
    ConversationsConfig cfg = ConversationsConfig.fromEnv(Map.of("IM_CONVERSATION_UNREAD_TRACKED", "2"));
    Topology topology = new Topology();
    topology.addSource("inbox", topics.inbox().keySerde().deserializer(), topics.inbox().valueSerde().deserializer(),
        topics.inbox().name());
    ConversationTopology.addTo(topology, ConversationTopology.PROCESSOR, "inbox", topics.inbox(),
        new ConversationMaterialiser.Stores(ConversationTopology.STATES_STORE, TOTALS), cfg, ConversationOrders.NONE);
    driver = new TopologyTestDriver(topology, StreamsTestConfig.forDriver("conversations", topics.names(), stateDir),
        T);
    inbox = driver.createInputTopic(topics.inbox().name(), topics.inbox().keySerde().serializer(),
        topics.inbox().valueSerde().serializer());
  }

  @AfterEach
  void tearDown() {
    driver.close();
    InMemorySchemaRegistry.drop(REGISTRY);
  }

  @Test
  void beyondTheCapTheOldestUnreadStayCountedUntilTheMarkerPassesThem() {
    // Given four unread messages from bob (seqs 1..4): the index keeps the newest two
    for (long seq = 1; seq <= 4; seq++) {
      inbox.pipeInput("alice", message(seq, "bob"));
    }
    assertThat(state().unread()).isEqualTo(4);
    assertThat(state().untracked()).isEqualTo(2);
    assertThat(unreadKeys()).isEqualTo(2);
    // and the user's totals say one conversation's count is capped (the badge's unreadTotalCapped, whatever page)
    assertThat(totals()).isEqualTo(new ConversationTotals(4, 1));

    // When alice reads up to 1: the untracked (up to seq 2) may still be unread, so they stay counted
    inbox.pipeInput("alice", read(1));
    assertThat(state().unread()).isEqualTo(4);

    // When she reads up to 3: seq 3 leaves the index, the untracked are all read
    inbox.pipeInput("alice", read(3));
    assertThat(state().unread()).isEqualTo(1);
    assertThat(state().untracked()).isZero();
    assertThat(totals()).isEqualTo(new ConversationTotals(1, 0));

    // When she reads everything, the total key is gone
    inbox.pipeInput("alice", read(4));
    assertThat(state().unread()).isZero();
    assertThat(total()).isZero();
    assertThat(unreadKeys()).isZero();
  }

  @Test
  void theBadgeIsCappedWhenAConversationOffThePageIsCapped() {
    // Given four unread from bob in alice's chat with him (two untracked: capped), then a newer one from carol
    for (long seq = 1; seq <= 4; seq++) {
      inbox.pipeInput("alice", message(seq, "bob"));
    }
    inbox.pipeInput("alice", InboxEntry.newBuilder(message(10, "carol")).setConversationId("d:alice:carol").build());
    // When alice lists one conversation: only carol's, which is exact
    ConversationList.ListPage page = ConversationList.page(StoreView.of(states()), "alice",
        java.util.Optional.empty(), 1);
    assertThat(page.conversations()).extracting(ConversationList.Item::conversationId)
        .containsExactly("d:alice:carol");
    assertThat(page.conversations().get(0).unreadCapped()).isFalse();
    // Then the badge is the user's total, capped because of bob's chat on no page shown
    assertThat(page.unreadTotal()).isEqualTo(5);
    assertThat(page.unreadTotalCapped()).isTrue();
    // And once alice mutes bob's chat, it no longer counts, capped or not
    inbox.pipeInput("alice", InboxEntry.newBuilder(message(11, "alice")).setType(InboxEntryType.CONVERSATION_SETTINGS)
        .setMessageId(null).setSenderId("alice").setMuted(true).build());
    assertThat(totals()).isEqualTo(new ConversationTotals(1, 0));
  }

  @Test
  void theSameMessageTwiceCountsOnceAndARecallOfAnUnknownMessageChangesNothing() {
    inbox.pipeInput("alice", message(5, "bob"));
    inbox.pipeInput("alice", message(5, "bob"));
    inbox.pipeInput("alice", InboxEntry.newBuilder(message(6, "bob")).setType(InboxEntryType.RECALL)
        .setMessageId("r").setRefMessageId("never-sent").setBody(null).build());
    assertThat(state().unread()).isEqualTo(1);
    assertThat(state().last().body()).isEqualTo("body 5");
  }

  @Test
  void aTimelineKeepsOnlyItsLastMessageAndBadRecordsAreSkipped() {
    // A large group's timeline: its last message under its own key, nothing else
    inbox.pipeInput("#g", InboxEntry.newBuilder(message(7, "bob")).setUserId("#g").setConversationId("g").build());
    inbox.pipeInput("#g", InboxEntry.newBuilder(message(8, "bob")).setUserId("#g").setConversationId("g")
        .setType(InboxEntryType.READ).build());
    ConversationState g = ConversationState.decode(states().get(ConversationKeys.state("#g", "g")));
    assertThat(g.last().conversationSeq()).isEqualTo(7);
    assertThat(g.unread()).isZero();
    assertThat(unreadKeys()).isZero();
    // A record keyed by another user, and one without a value, change nothing
    inbox.pipeInput("mallory", message(9, "bob"));
    inbox.pipeInput("alice", (InboxEntry) null);
    assertThat(states().get(ConversationKeys.state("alice", CHAT))).isNull();
    assertThat(states().get(ConversationKeys.state("mallory", CHAT))).isNull();
  }

  @Test
  void invalidSettingsAreRefusedAtStartUp() {
    assertThatThrownBy(() -> new ConversationsConfig(0, 50, 500, 100, true, 0, 0, 1)).isInstanceOf(
        IllegalArgumentException.class);
    assertThatThrownBy(() -> new ConversationsConfig(1, 50, 10, 100, true, 0, 0, 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ConversationsConfig(1, 50, 500, 0, true, 0, 0, 1)).isInstanceOf(
        IllegalArgumentException.class);
    assertThatThrownBy(() -> new ConversationsConfig(1, 50, 500, 100, true, -1, 0, 1)).isInstanceOf(
        IllegalArgumentException.class);
    assertThatThrownBy(() -> new ConversationsConfig(1, 50, 500, 100, true, 0, -1, 1)).isInstanceOf(
        IllegalArgumentException.class);
    assertThatThrownBy(() -> new ConversationsConfig(1, 50, 500, 100, true, 0, 0, 0)).isInstanceOf(
        IllegalArgumentException.class);
    assertThat(ConversationsConfig.defaults()).isEqualTo(new ConversationsConfig(100, 50, 500, 100, true, 10_000,
        30_000, 20_000));
    assertThat(ConversationsConfig.fromEnv(Map.of("IM_CONVERSATIONS_PAGE_DEFAULT", "900")).defaultLimit())
        .isEqualTo(500);
  }

  @Test
  void aDisabledListIsNotInTheTopology() {
    // Given IM_CONVERSATIONS_ENABLED=false
    ConversationsConfig off = ConversationsConfig.fromEnv(Map.of("IM_CONVERSATIONS_ENABLED", "false"));
    assertThat(off.enabled()).isFalse();
    // When the inbox store's topology is built, then it has neither the list's processor nor its stores
    String described = dev.impipe.inbox.InboxStoreTopology.build(topics,
        dev.impipe.inbox.InboxStoreConfig.defaults(), off).describe().toString();
    assertThat(described).doesNotContain(ConversationTopology.PROCESSOR)
        .doesNotContain(ConversationTopology.STATES_STORE);
    // And when enabled: the processor and its states store, no totals store (the badge is summed from the states)
    assertThat(dev.impipe.inbox.InboxStoreTopology.build(topics, dev.impipe.inbox.InboxStoreConfig.defaults(),
        ConversationsConfig.defaults()).describe().toString()).contains(ConversationTopology.PROCESSOR)
        .contains(ConversationTopology.STATES_STORE).doesNotContain("totals");
  }

  private ConversationState state() {
    return ConversationState.decode(states().get(ConversationKeys.state("alice", CHAT)));
  }

  private KeyValueStore<org.apache.kafka.common.utils.Bytes, byte[]> states() {
    return driver.getKeyValueStore(ConversationTopology.STATES_STORE);
  }

  private long total() {
    return totals().unread();
  }

  /** The stored totals, checked against the badge a list page sums from the states (the inbox store's way). */
  private ConversationTotals totals() {
    StoreView<byte[]> totals = StoreView.of(driver.getKeyValueStore(TOTALS));
    ConversationTotals stored = totals.get(ConversationKeys.total("alice")).map(ConversationTotals::decode)
        .orElse(ConversationTotals.ZERO);
    ConversationList.ListPage page = ConversationList.page(StoreView.of(states()), "alice",
        java.util.Optional.empty(), 1);
    assertThat(page.unreadTotal()).isEqualTo(stored.unread());
    assertThat(page.unreadTotalCapped()).isEqualTo(stored.capped() > 0);
    return stored;
  }

  /** The unread messages the state of alice's chat indexes. */
  private long unreadKeys() {
    byte[] raw = states().get(ConversationKeys.state("alice", CHAT));
    return raw == null ? 0 : ConversationState.decode(raw).index().size();
  }

  private static InboxEntry message(long seq, String sender) {
    return InboxEntry.newBuilder().setUserId("alice").setType(InboxEntryType.MESSAGE).setConversationId(CHAT)
        .setConversationSeq(seq).setMessageId("m" + seq).setSenderId(sender).setBody("body " + seq)
        .setTimestamp(T.plusSeconds(seq)).build();
  }

  private static InboxEntry read(long upTo) {
    return InboxEntry.newBuilder().setUserId("alice").setType(InboxEntryType.READ).setConversationId(CHAT)
        .setConversationSeq(100 + upTo).setSenderId("alice").setReadUpToSeq(upTo).setTimestamp(T).build();
  }
}
