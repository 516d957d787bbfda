package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.inbox.query.SyncCursor;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Where a connection is: what it pushed, what the device may ACK, what it committed. */
class PositionsTest {

  @Test
  void aFreshConnectionHasPushedNothingAndCommittedNothing() {
    Positions p = new Positions();
    assertThat(p.pushed()).isEqualTo(-1);
    assertThat(p.group("g1")).isEqualTo(-1);
    assertThat(p.vector()).isEqualTo(SyncCursor.of(-1, Map.of()));
    assertThat(p.committed()).isNull();
  }

  @Test
  void theVectorCarriesTheInboxAndEveryGroupPushed() {
    // Given inbox seq 7 and two group entries pushed
    Positions p = new Positions();
    p.pushed(7);
    assertThat(p.pushedGroup("g1", 3)).isNull();
    assertThat(p.pushedGroup("g1", 4)).isEqualTo(3L);
    p.pushedGroup("g2", 9);
    // Then the vector names them all, and an inbox entry at 8 goes out with the groups as they are
    assertThat(p.vector()).isEqualTo(SyncCursor.of(7, Map.of("g1", 4L, "g2", 9L)));
    assertThat(p.vectorAt(8)).isEqualTo(SyncCursor.of(8, Map.of("g1", 4L, "g2", 9L)));
  }

  @Test
  void aGroupPushThatDidNotFitIsUndone() {
    Positions p = new Positions();
    Long before = p.pushedGroup("g1", 5);
    p.undoGroup("g1", before);
    assertThat(p.group("g1")).isEqualTo(-1);
    p.pushedGroup("g1", 5);
    before = p.pushedGroup("g1", 6);
    p.undoGroup("g1", before);
    assertThat(p.group("g1")).isEqualTo(5);
  }

  @Test
  void aPageMovesThePositionsOnButNeverBack() {
    // Given inbox 10 and g1 at 5 pushed
    Positions p = new Positions();
    p.pushed(10);
    p.pushedGroup("g1", 5);
    // When a page ends at next 8 with a cursor past other members' leaves in g1 and g2
    p.pageEnded(8, SyncCursor.of(8, Map.of("g1", 3L, "g2", 12L)));
    // Then nothing moves back, and the group positions the store reports are taken
    assertThat(p.pushed()).isEqualTo(10);
    assertThat(p.group("g1")).isEqualTo(5);
    assertThat(p.group("g2")).isEqualTo(12);
    // And a page without a cursor, ending further on, moves the inbox only
    p.pageEnded(15, null);
    assertThat(p.vector()).isEqualTo(SyncCursor.of(15, Map.of("g1", 5L, "g2", 12L)));
  }

  @Test
  void anAckBeyondWhatWasPushedIsRefusedNamingWhy() {
    Positions p = new Positions();
    p.pushed(5);
    p.pushedGroup("g1", 2);
    assertThat(p.refusal(SyncCursor.of(5, Map.of("g1", 2L)))).isNull();
    assertThat(p.refusal(SyncCursor.of(3, Map.of()))).isNull();
    assertThat(p.refusal(SyncCursor.of(6, Map.of()))).isEqualTo("ack for seq 6, beyond what was pushed (5)");
    assertThat(p.refusal(SyncCursor.of(5, Map.of("g1", 3L)))).isEqualTo("ack for group g1 beyond what was pushed");
    assertThat(p.refusal(SyncCursor.of(5, Map.of("g9", 0L)))).isEqualTo("ack for group g9 beyond what was pushed");
  }

  @Test
  void commitsMoveOnlyForwardAndTheResyncCursorIsWhatWasCommitted() {
    Positions p = new Positions();
    assertThat(p.commitGroup("g1", 4)).isTrue();
    assertThat(p.committed()).as("no inbox ACK yet").isNull();
    assertThat(p.commitInbox(6)).isTrue();
    assertThat(p.commitInbox(6)).isFalse();
    assertThat(p.commitInbox(2)).isFalse();
    assertThat(p.commitGroup("g1", 4)).isFalse();
    assertThat(p.commitGroup("g1", 5)).isTrue();
    assertThat(p.committed()).isEqualTo(SyncCursor.of(6, Map.of("g1", 5L)).encode());
  }

  @Test
  void theFirstInboxCommitMayBeSeqZero() {
    Positions p = new Positions();
    assertThat(p.commitInbox(0)).isTrue();
    assertThat(p.committed()).isEqualTo(SyncCursor.of(0, Map.of()).encode());
  }

  @Test
  void aV2CursorFromTheStoreRoundTripsThroughEveryCursorTheConnectionHandsOut() throws Exception {
    // Given the store serves inbox generation 1: its first page's cursor is a v2 one
    String fromStore = SyncCursor.of(12, Map.of("g1", 4L)).inGeneration(1).encode();
    BacklogPage page = BacklogPage.of(dev.impipe.edge.http.Json.MAPPER.readTree(
        "{\"entries\":[],\"next\":12,\"cursor\":\"" + fromStore + "\"}"));
    assertThat(page.cursor()).isEqualTo(SyncCursor.of(12, Map.of("g1", 4L)).inGeneration(1));
    Positions p = new Positions();
    p.pageEnded(page.next(), page.cursor());

    // Then the vector (next page's after, frames' cursors) and the resync cursor are of generation 1
    assertThat(p.generation()).isEqualTo(1);
    assertThat(p.vector().encode()).isEqualTo(fromStore);
    assertThat(SyncCursor.decode(p.vectorAt(13).encode())).isEqualTo(SyncCursor.of(13, Map.of("g1", 4L))
        .inGeneration(1));
    p.commitInbox(12);
    p.commitGroup("g1", 4);
    assertThat(p.committed()).isEqualTo(fromStore);
    // And an ACK echoing it is taken, one of generation 0 refused
    assertThat(p.refusal(SyncCursor.decode(fromStore))).isNull();
    assertThat(p.refusal(SyncCursor.of(12, Map.of()))).isEqualTo(
        "ack for a cursor of inbox generation 0, this connection is at generation 1: resync");
  }

  @Test
  void aBacklogFromTheDevicesCursorStartsPushedAndCommittedThere() {
    // Given a connection whose backlog starts after the device's cursor, in generation 1
    Positions p = new Positions();
    p.startAfter(SyncCursor.of(20, Map.of("g1", 4L)).inGeneration(1));
    // Then it pushed and committed up to there: an ACK at or below it moves nothing, beyond is refused until pushed
    assertThat(p.generation()).isEqualTo(1);
    assertThat(p.vector()).isEqualTo(SyncCursor.of(20, Map.of("g1", 4L)).inGeneration(1));
    assertThat(p.committed()).isEqualTo(SyncCursor.of(20, Map.of("g1", 4L)).inGeneration(1).encode());
    assertThat(p.commitInbox(20)).isFalse();
    assertThat(p.commitInbox(19)).isFalse();
    assertThat(p.commitGroup("g1", 4)).isFalse();
    assertThat(p.refusal(SyncCursor.of(21, Map.of()).inGeneration(1))).contains("beyond what was pushed (20)");
    assertThat(p.refusal(SyncCursor.of(20, Map.of()))).contains("generation 0");
    // And the first ACK past it commits
    p.pushed(25);
    assertThat(p.commitInbox(25)).isTrue();
  }
}
