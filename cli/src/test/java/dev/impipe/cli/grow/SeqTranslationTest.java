package dev.impipe.cli.grow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SeqTranslationTest {

  @Test
  void aSeqMapsToTheCopyOfTheNewestEntryAtOrBelowIt() {
    SeqTranslation t = new SeqTranslation();
    assertThat(t.isEmpty()).isTrue();
    // Given values holding bob's old seqs 4, 10 and 15, and alice's 10
    t.wanted("bob", 4);
    t.wanted("bob", 10);
    t.wanted("bob", 15);
    t.wanted("alice", 10);
    assertThat(t.isEmpty()).isFalse();

    // When bob's entries 10 and 12 were copied to 7 and 9 (new-offset order), alice's none; carol's is not asked for
    t.copiedEntry("bob", 10, 7);
    t.copiedEntry("bob", 12, 9);
    t.copiedEntry("carol", 1, 8);

    // Then 10 is its own entry's copy, 15 the copy of 12 (the newest at or below it), 4 is below every entry
    assertThat(t.translate("bob", 10)).isEqualTo(7);
    assertThat(t.translate("bob", 15)).isEqualTo(9);
    assertThat(t.translate("bob", 4)).isEqualTo(-1);
    assertThat(t.translate("alice", 10)).isEqualTo(-1);
  }

  @Test
  void aLowerOffsetNeverMovesASeqBack() {
    SeqTranslation t = new SeqTranslation();
    t.wanted("bob", 10);
    t.copiedEntry("bob", 10, 7);
    t.copiedEntry("bob", 9, 5);
    assertThat(t.translate("bob", 10)).isEqualTo(7);
  }

  @Test
  void aSeqNeverAskedForIsAnError() {
    SeqTranslation t = new SeqTranslation();
    t.wanted("bob", 10);
    assertThatThrownBy(() -> t.translate("bob", 11)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("seq 11 of bob was not asked for");
    assertThatThrownBy(() -> t.translate("alice", 10)).hasMessage("seq 10 of alice was not asked for");
  }
}
