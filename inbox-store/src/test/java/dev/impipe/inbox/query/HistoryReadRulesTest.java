package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.inbox.internal.HistoryMaterialiser;
import dev.impipe.inbox.internal.MembershipMaterialiser;
import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.runtime.streams.VersionedValue;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** Who reads which history from where, and read-your-writes for history, on in-memory stores. */
class HistoryReadRulesTest {

  @Test
  void aDirectChatIsReadWhollyByItsTwoPartiesOnly() {
    MemoryStoreView<byte[]> memberships = new MemoryStoreView<>();
    assertThat(HistoryAccess.from(memberships, "alice", "d:alice:bob")).hasValue(0);
    assertThat(HistoryAccess.from(memberships, "bob", "d:alice:bob")).hasValue(0);
    assertThat(HistoryAccess.from(memberships, "carol", "d:alice:bob")).isEmpty();
    // an id that is not the canonical one of its parties (order, a third part) reads nothing
    assertThat(HistoryAccess.from(memberships, "alice", "d:bob:alice")).isEmpty();
    assertThat(HistoryAccess.from(memberships, "alice", "d:alice:bob:carol")).isEmpty();
    assertThat(HistoryAccess.from(memberships, "alice", "d:alice")).isEmpty();
  }

  @Test
  void aGroupIsReadByItsMembersFromTheirJoinAndATimelineNeverThroughHistory() {
    MemoryStoreView<byte[]> memberships = new MemoryStoreView<byte[]>()
        .put(StoreKeys.userGroup("bob", "g"), MembershipMaterialiser.encode(12))
        .put(StoreKeys.userGroup("bob", "#g"), MembershipMaterialiser.encode(0));
    assertThat(HistoryAccess.from(memberships, "bob", "g")).hasValue(12);
    assertThat(HistoryAccess.from(memberships, "carol", "g")).isEmpty();
    assertThat(HistoryAccess.from(memberships, "bob", "#g")).isEmpty();
    assertThat(HistoryAccess.from(memberships, null, "g")).isEmpty();
    assertThat(HistoryAccess.from(memberships, "bob", null)).isEmpty();
    assertThat(HistoryAccess.from(memberships, "bob", "g")).isNotEqualTo(OptionalLong.of(0));
  }

  @Test
  void aMembershipValueOfAnotherVersionIsRefused() {
    byte[] v2 = MembershipMaterialiser.encode(5);
    v2[0] = 2;
    assertThatThrownBy(() -> MembershipMaterialiser.decode(v2))
        .isInstanceOf(VersionedValue.UnknownVersionException.class).hasMessageContaining("version 2");
    assertThat(MembershipMaterialiser.decode(MembershipMaterialiser.encode(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aHistoryReadWithMinSeqWaitsUntilThePartitionAppliedIt() {
    MemoryStoreView<Long> applied = new MemoryStoreView<>();
    assertThat(HistoryApplied.seq(applied)).isEqualTo(-1);
    HistoryApplied.require(applied, -1, 0);
    assertThatThrownBy(() -> HistoryApplied.require(applied, 0, 3)).isInstanceOf(NotServableException.class)
        .hasMessageContaining("partition 3").hasMessageContaining("not yet 0");
    applied.put(HistoryMaterialiser.APPLIED_KEY, 7L);
    assertThat(HistoryApplied.seq(applied)).isEqualTo(7);
    HistoryApplied.require(applied, 7, 3);
    assertThatThrownBy(() -> HistoryApplied.require(applied, 8, 3)).isInstanceOf(NotServableException.class)
        .extracting(e -> ((NotServableException) e).reason()).isEqualTo(NotServableException.Reason.BEHIND);
  }
}
