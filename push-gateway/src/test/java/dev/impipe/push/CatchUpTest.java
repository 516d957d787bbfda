package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Where the reader starts in a gained partition, and which offset a backlog then waits for. */
class CatchUpTest {

  @Test
  void anEmptyPartitionIsCaughtUpAtOnce() {
    CatchUp catchUp = new CatchUp();
    assertThat(catchUp.start(3, 0)).isEmpty();
    assertThat(catchUp.catching(3)).isFalse();
    assertThat(catchUp.route(3, 0)).isTrue();
  }

  @Test
  void theLastCommittedRecordBeforeTheEndIsFoundBehindItsTransactionMarker() {
    // Given partition 1 gained with its end at 500: records up to 497, a commit marker at 498-499
    CatchUp catchUp = new CatchUp();
    assertThat(catchUp.start(1, 500)).hasValue(400);

    // When the reader reads 400..497 (nothing is routed) and its position passes the markers
    for (long offset = 400; offset <= 497; offset++) {
      assertThat(catchUp.route(1, offset)).isFalse();
    }
    assertThat(catchUp.advanced(1, 498)).isNull();
    // And a record past the end comes in the same poll: not routed either (it is read again from the end)
    assertThat(catchUp.route(1, 501)).isFalse();
    CatchUp.Step step = catchUp.advanced(1, 502);

    // Then the backlog waits for 497, and the reader reads on from 500
    assertThat(step).isEqualTo(new CatchUp.Step(true, 497, 500));
    assertThat(catchUp.catching(1)).isFalse();
    assertThat(catchUp.route(1, 500)).isTrue();
  }

  @Test
  void aStretchWithoutCommittedRecordsIsReadFurtherBack() {
    // Given partition 2 gained with its end at 5,000, whose last 100 offsets hold no committed record
    CatchUp catchUp = new CatchUp();
    assertThat(catchUp.start(2, 5_000)).hasValue(4_900);

    // When the reader reaches the end without a record: it reads ten times further back
    assertThat(catchUp.advanced(2, 5_000)).isEqualTo(new CatchUp.Step(false, -1, 3_900));
    catchUp.route(2, 4_000);

    // Then the record found there is what the backlog waits for
    assertThat(catchUp.advanced(2, 5_000)).isEqualTo(new CatchUp.Step(true, 4_000, 5_000));
  }

  @Test
  void aPartitionWithoutAnyCommittedRecordEndsWithNoneAfterReadingFromTheStart() {
    CatchUp catchUp = new CatchUp();
    assertThat(catchUp.start(0, 30)).hasValue(0);
    assertThat(catchUp.advanced(0, 30)).isEqualTo(new CatchUp.Step(true, -1, 30));
  }

  @Test
  void aPartitionLostWhileCaughtUpIsForgotten() {
    CatchUp catchUp = new CatchUp();
    catchUp.start(4, 10);
    catchUp.forget(4);
    assertThat(catchUp.catching(4)).isFalse();
    assertThat(catchUp.advanced(4, 10)).isNull();
  }
}
