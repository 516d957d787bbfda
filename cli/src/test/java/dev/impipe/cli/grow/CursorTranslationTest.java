package dev.impipe.cli.grow;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CursorTranslationTest {

  @Test
  void aCursorMovesToTheNewOffsetOfTheNewestEntryItHadSeen() {
    // Given alice's old entries at seqs 3, 7, 12 and her phone having synced up to 7 (tablet up to 9, a gap)
    CursorTranslation t = new CursorTranslation();
    t.oldCursor("alice", "phone", 7);
    t.oldCursor("alice", "tablet", 9);

    // When they are copied to new offsets 20, 25, 31 (other users' entries in between)
    t.copiedEntry("alice", 3, 20);
    t.copiedEntry("alice", 7, 25);
    t.copiedEntry("alice", 12, 31);

    // Then both next sync after 25: exactly the entry that was at 12
    assertThat(t.result()).containsExactly(new CursorTranslation.Translated("alice", "phone", 7, 25),
        new CursorTranslation.Translated("alice", "tablet", 9, 25));
  }

  @Test
  void aCursorBelowEveryRetainedEntryBecomesMinusOne() {
    CursorTranslation t = new CursorTranslation();
    t.oldCursor("bob", "web", 2);
    t.oldCursor("bob", "new", -1);

    t.copiedEntry("bob", 5, 0);
    t.copiedEntry("bob", 6, 3);

    assertThat(t.result()).extracting(CursorTranslation.Translated::newSeq).containsExactly(-1L, -1L);
  }

  @Test
  void aCursorAtTheEndStaysAtTheEnd() {
    CursorTranslation t = new CursorTranslation();
    t.oldCursor("carol", "phone", 50);
    t.copiedEntry("carol", 10, 1);
    t.copiedEntry("carol", 50, 2);

    assertThat(t.result()).extracting(CursorTranslation.Translated::newSeq).containsExactly(2L);
  }

  @Test
  void theNewestCursorRecordOfADeviceWinsAndOtherUsersEntriesDoNotCount() {
    CursorTranslation t = new CursorTranslation();
    t.oldCursor("dave", "phone", 1);
    t.oldCursor("dave", "phone", 8);

    t.copiedEntry("erin", 2, 40);
    t.copiedEntry("dave", 8, 41);
    t.copiedEntry("nobody-with-a-device", 1, 42);

    assertThat(t.result()).containsExactly(new CursorTranslation.Translated("dave", "phone", 8, 41));
    assertThat(t.devices()).isEqualTo(1);
  }
}
