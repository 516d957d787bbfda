package dev.impipe.cli.grow;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.inbox.conversations.ConversationKeys;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.inbox.query.ReadIntervals.Interval;
import dev.impipe.runtime.streams.OrderedKey;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which inbox-store changelogs a grow carries over, where each record goes and what of it is translated. */
class CarriedStoresTest {

  @Test
  void theChangelogsAreTheInboxStoresOfEachGenerationsApplicationId() {
    assertThat(CarriedStores.changelog("im.", 0, "large-groups")).isEqualTo("im.inbox-store-large-groups-changelog");
    assertThat(CarriedStores.changelog("im.", 1, "conversation-states"))
        .isEqualTo("im.inbox-store.g1-conversation-states-changelog");
    assertThat(CarriedStores.STORES).extracting(CarriedStores.Store::name)
        .containsExactly("conversation-states", "conversation-memberships", "large-groups");
    assertThat(CarriedStores.storeOf("im.", 1, "im.inbox-store.g1-large-groups-changelog"))
        .map(CarriedStores.Store::inboxSeqs).contains(true);
    assertThat(CarriedStores.storeOf("im.", 0, "im.inbox-store.g1-large-groups-changelog")).isEmpty();
    // Only the changelogs that exist are carried (an inbox store that never ran has none)
    assertThat(StoreCarry.sources(Set.of("im.inbox-store-conversation-states-changelog", "im.inbox"), "im.", 0))
        .containsExactly("im.inbox-store-conversation-states-changelog");
  }

  @Test
  void aRecordGoesWithTheUserItsKeyStartsWith() {
    // Given a conversation state key and a (user, group) key of bob
    byte[] state = ConversationKeys.state("bob", "g:team").get();
    byte[] userGroup = OrderedKey.key().string("bob").string("team").build();
    // Then both name bob, as the bytes the inbox's String key has (murmur2 places them with his inbox)
    assertThat(CarriedStores.userOf(state)).hasValueSatisfying(u -> assertThat(u).isEqualTo(bytes("bob")));
    assertThat(CarriedStores.userOf(userGroup)).hasValueSatisfying(u -> assertThat(u).isEqualTo(bytes("bob")));
    assertThat(Placement.partitionFor(CarriedStores.userOf(state).orElseThrow(), 8, 0))
        .isEqualTo(Placement.partitionFor(bytes("bob"), 8, 3));
    // And a key that is not one has no user
    assertThat(CarriedStores.userOf(null)).isEmpty();
    assertThat(CarriedStores.userOf(new byte[] {1, 2, 3})).isEmpty();
  }

  @Test
  void largeGroupIntervalsHaveTheirInboxSeqsTranslatedAndTheOpenSentinelKept() {
    // Given a closed interval opened at inbox seq 11, closed at 13, and an open one opened at 14
    ReadIntervals before = new ReadIntervals(List.of(new Interval(8, 15, 11, 13, 300),
        new Interval(20, Long.MAX_VALUE, 14, Long.MAX_VALUE, Long.MAX_VALUE)));
    assertThat(CarriedStores.inboxSeqs(before.encode())).containsExactly(11L, 13L, 14L);

    // When translated (here: +100)
    byte[] after = CarriedStores.translateLargeGroups(before.encode(), seq -> seq + 100);

    // Then the inbox seqs moved, the conversation seqs, times and the open sentinel did not
    assertThat(ReadIntervals.decode(after).intervals()).containsExactly(new Interval(8, 15, 111, 113, 300),
        new Interval(20, Long.MAX_VALUE, 114, Long.MAX_VALUE, Long.MAX_VALUE));
    // And a tombstone stays one, a value that does not decode is copied as it is
    assertThat(CarriedStores.translateLargeGroups(null, seq -> seq)).isNull();
    assertThat(CarriedStores.inboxSeqs(null)).isEmpty();
    byte[] junk = {9, 9};
    assertThat(CarriedStores.translateLargeGroups(junk, seq -> seq)).isSameAs(junk);
    assertThat(CarriedStores.inboxSeqs(junk)).isEmpty();
  }

  @Test
  void aSeqMapsToItsEntrysCopyAndOneOlderThanEverythingRetainedToMinusOne() {
    SeqTranslation seqs = new SeqTranslation();
    // Given bob's intervals name inbox seqs 3 (expired since), 40 and 57 of generation 0
    seqs.wanted("bob", 3);
    seqs.wanted("bob", 40);
    seqs.wanted("bob", 57);
    seqs.wanted("amy", 40);
    // When bob's retained entries 38, 40, 57, 60 were copied to 0, 1, 2, 3 (amy's elsewhere)
    seqs.copiedEntry("bob", 38, 0);
    seqs.copiedEntry("bob", 40, 1);
    seqs.copiedEntry("bob", 57, 2);
    seqs.copiedEntry("bob", 60, 3);
    seqs.copiedEntry("amy", 39, 7);
    // Then each seq is its entry's copy, and the expired one is below every copied entry
    assertThat(seqs.translate("bob", 40)).isEqualTo(1);
    assertThat(seqs.translate("bob", 57)).isEqualTo(2);
    assertThat(seqs.translate("bob", 3)).isEqualTo(-1);
    assertThat(seqs.translate("amy", 40)).isEqualTo(7);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
