package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/** The bytes one socket holds written and not yet flushed. */
class WriteBudgetTest {

  private final LongAdder total = new LongAdder();

  @Test
  void framesTakeTheirSizeUntilTheBudgetIsFullAndGiveItBackWhenWritten() {
    // Given a budget of 100 bytes
    WriteBudget budget = new WriteBudget(100, total);

    // When 60 and 40 bytes are written, a 41st byte does not fit
    assertThat(budget.tryTake(60)).isTrue();
    assertThat(budget.tryTake(40)).isTrue();
    assertThat(budget.tryTake(1)).isFalse();
    assertThat(budget.used()).isEqualTo(100);
    assertThat(budget.free()).isZero();
    assertThat(total.sum()).isEqualTo(100);

    // When the 60-byte write completes: at most half is held again, and the room is back
    assertThat(budget.give(60)).isTrue();
    assertThat(budget.tryTake(60)).isTrue();
    assertThat(budget.give(40)).isFalse(); // 60 of 100 held: more than half
    assertThat(total.sum()).isEqualTo(60);
  }

  @Test
  void aFrameLargerThanTheWholeBudgetGoesWhenNothingElseIsHeld() {
    WriteBudget budget = new WriteBudget(100, total);
    assertThat(budget.tryTake(500)).isTrue();
    assertThat(budget.tryTake(1)).isFalse();
    budget.give(500);
    assertThat(budget.used()).isZero();
  }

  @Test
  void aPageIsReadOnlyWhileAtMostHalfIsHeld() {
    WriteBudget budget = new WriteBudget(100, total);
    budget.take(50);
    assertThat(budget.roomForPage()).isTrue();
    budget.take(1);
    assertThat(budget.roomForPage()).isFalse();
    // a forced take (a page sized to fit, a closing frame) may go beyond the limit
    budget.take(200);
    assertThat(budget.used()).isEqualTo(251);
    assertThat(budget.free()).isZero();
  }

  @Test
  void clearingGivesEverythingBackOnceAndLateCompletionsDoNotGoNegative() {
    WriteBudget budget = new WriteBudget(100, total);
    WriteBudget other = new WriteBudget(100, total);
    budget.take(70);
    other.take(20);
    budget.clear();
    budget.give(70); // the write completing after the socket was forgotten
    assertThat(budget.used()).isZero();
    assertThat(total.sum()).isEqualTo(20);
  }

  @Test
  void utf8LengthCountsBytesNotChars() {
    assertThat(WriteBudget.utf8Length("abc")).isEqualTo(3);
    assertThat(WriteBudget.utf8Length("é")).isEqualTo(2);
    assertThat(WriteBudget.utf8Length("€")).isEqualTo(3);
    assertThat(WriteBudget.utf8Length("😀")).isEqualTo(4);
    String mixed = "a\u0001é€😀";
    assertThat(WriteBudget.utf8Length(mixed))
        .isEqualTo(mixed.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
    // a lone surrogate (encoded as one replacement byte) is counted high, never low
    assertThat(WriteBudget.utf8Length("\ud800")).isEqualTo(3);
  }
}
