package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntryType;
import dev.impipe.fanout.FanoutMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The rounds of a diffusion-mode switch over in-memory stores: who is owed an entry, how a round's budget of member
 * reads is shared between switches, and what each round leaves pending. (The topology around them:
 * {@code dev.impipe.fanout.ModeSwitchRoundsTest}.)
 */
class ModeSwitchRoundsTest {

  /** Switched at conversation seq 40, task clock 10, record time 456. */
  private static final ModeSwitch SWITCH = new ModeSwitch(40, 10, 123, 456, true, null);

  private final MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
  private final KeyValueStore<String, byte[]> switches = Stores.keyValueStoreBuilder(
      Stores.inMemoryKeyValueStore("switches"), Serdes.String(), Serdes.ByteArray()).withLoggingDisabled().build();
  private final KeyValueStore<Bytes, byte[]> members = Stores.keyValueStoreBuilder(
      Stores.inMemoryKeyValueStore("members"), Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled().build();
  private final FanoutMetrics metrics = new FanoutMetrics(new SimpleMeterRegistry());
  private final ModeSwitchRounds rounds = new ModeSwitchRounds(switches, members, metrics);
  /** Entries written, as "group/user@recordTime". */
  private final List<String> written = new ArrayList<>();
  private final ModeSwitchRounds.Out out = (user, entry, timestamp) -> {
    assertThat(entry.getType()).isEqualTo(InboxEntryType.CONVERSATION_MODE);
    written.add(entry.getConversationId() + "/" + user + "@" + timestamp);
  };

  ModeSwitchRoundsTest() {
    switches.init(context.getStateStoreContext(), switches);
    members.init(context.getStateStoreContext(), members);
  }

  @AfterEach
  void tearDown() {
    switches.close();
    members.close();
  }

  private void member(String group, String user, long joinedAt) {
    members.put(MemberKeys.key(group, user), MemberKeys.joinedAt(joinedAt));
  }

  private void pending(String group, ModeSwitch change) {
    switches.put(group, change.encode());
  }

  private ModeSwitch stored(String group) {
    byte[] value = switches.get(group);
    return value == null ? null : ModeSwitch.decode(value);
  }

  @Test
  void aPassTellsTheMembersWhoJoinedBeforeTheSwitchAndCountsThem() {
    // Given a joined before the switch, b at its very clock (its JOINED entry carried the mode), c long before
    member("g", "a", 5);
    member("g", "b", 10);
    member("g", "c", 3);

    ModeSwitchRounds.Progress p = rounds.advance("g", SWITCH, 10, out);

    assertThat(written).containsExactly("g/a@456", "g/c@456");
    assertThat(p).isEqualTo(new ModeSwitchRounds.Progress(3, 2, null));
    assertThat(metrics.inboxEntries()).isEqualTo(2);
  }

  @Test
  void aPassThatRunsOutOfBudgetRemembersTheLastMemberItRead() {
    member("g", "a", 1);
    member("g", "b", 1);
    member("g", "c", 1);

    ModeSwitchRounds.Progress p = rounds.advance("g", SWITCH, 2, out);

    assertThat(p).isEqualTo(new ModeSwitchRounds.Progress(2, 2, SWITCH.withDoneThrough("b")));
    assertThat(rounds.advance("g", p.next(), 2, out).written()).isEqualTo(1);
    assertThat(written).containsExactly("g/a@456", "g/b@456", "g/c@456");
  }

  @Test
  void aRoundSharesItsBudgetBetweenSwitchesInGroupOrderAndKeepsWhatIsLeft() {
    // Given g1 (2 members) and g2 (3 members) pending
    member("g1", "a", 1);
    member("g1", "b", 1);
    member("g2", "a", 1);
    member("g2", "b", 1);
    member("g2", "c", 1);
    pending("g1", SWITCH);
    pending("g2", SWITCH);

    // When a round may read 3 member keys: g1 takes 2, g2 the 1 left
    assertThat(rounds.round(3, out)).isEqualTo(3);

    assertThat(written).containsExactly("g1/a@456", "g1/b@456", "g2/a@456");
    assertThat(stored("g1")).isNull();
    assertThat(stored("g2")).isEqualTo(SWITCH.withDoneThrough("a"));
    assertThat(rounds.pending("g1")).isFalse();
    assertThat(rounds.pending("g2")).isTrue();
    assertThat(metrics.inboxEntries()).isEqualTo(3);
  }

  @Test
  void aRoundWhoseBudgetIsSpentLeavesTheNextSwitchWhereItWas() {
    member("g1", "a", 1);
    member("g1", "b", 1);
    member("g2", "a", 1);
    member("g2", "b", 1);
    member("g2", "c", 1);
    pending("g1", SWITCH);
    pending("g2", SWITCH.withDoneThrough("b"));

    // g1 takes the whole budget
    assertThat(rounds.round(2, out)).isEqualTo(2);
    assertThat(stored("g2")).isEqualTo(SWITCH.withDoneThrough("b"));

    // Then the next round tells g2's last member only, and nothing is pending after it
    assertThat(rounds.round(2, out)).isEqualTo(1);
    assertThat(written).containsExactly("g1/a@456", "g1/b@456", "g2/c@456");
    assertThat(rounds.round(2, out)).isZero();
    assertThat(stored("g2")).isNull();
  }

  @Test
  void aSwitchStartsWithItsFirstRoundAndOnlyAnUnfinishedOneIsPending() {
    member("small", "a", 1);
    member("big", "a", 1);
    member("big", "b", 1);

    rounds.start("small", SWITCH, 2, out);
    rounds.start("big", SWITCH, 1, out);

    assertThat(rounds.pending("small")).isFalse();
    assertThat(stored("big")).isEqualTo(SWITCH.withDoneThrough("a"));
    assertThat(rounds.round(5, out)).isEqualTo(1);
    assertThat(written).containsExactly("small/a@456", "big/a@456", "big/b@456");
  }

  @Test
  void aMemberLeavingDuringTheSwitchGetsTheEntryTheyAreOwedFirstAndOnlyThen() {
    pending("g", SWITCH.withDoneThrough("b"));
    List<String> left = new ArrayList<>();

    // a was told by a committed round; d joined after the switch; e is owed; h is in no pending switch
    rounds.beforeLeave("g", "a", 1, (user, entry) -> left.add(user));
    rounds.beforeLeave("g", "d", 10, (user, entry) -> left.add(user));
    rounds.beforeLeave("g", "e", 9, (user, entry) -> left.add(user + ":" + entry.getType()));
    rounds.beforeLeave("other", "h", 1, (user, entry) -> left.add(user));

    assertThat(left).containsExactly("e:CONVERSATION_MODE");
    assertThat(metrics.inboxEntries()).isEqualTo(1);
  }
}
