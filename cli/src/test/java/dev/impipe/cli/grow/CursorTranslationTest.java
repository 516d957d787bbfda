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

  @Test
  void aGroupPositionFollowsTheGroupTimelineNotTheUsersInbox() {
    // Given alice's phone at 5 in her inbox and at 30 in group g7's timeline (key "#g7" in the inbox)
    CursorTranslation t = new CursorTranslation();
    t.oldCursor("alice", "phone", 5);
    t.oldCursor("alice", "phone#g7", 30);

    // When alice's entries and the timeline's entries are copied
    t.copiedEntry("alice", 5, 100);
    t.copiedEntry("alice", 40, 101);
    t.copiedEntry("#g7", 30, 7);
    t.copiedEntry("#g7", 31, 9);

    // Then each moves along its own timeline
    assertThat(t.result()).containsExactlyInAnyOrder(new CursorTranslation.Translated("alice", "phone", 5, 100),
        new CursorTranslation.Translated("alice", "phone#g7", 30, 7));
    assertThat(CursorTranslation.timelineOf("alice", "phone#g7")).isEqualTo("#g7");
  }
}
