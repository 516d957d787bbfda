package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The opaque sync cursor: what a client echoes back must decode to the same position, anything else is refused. */
class SyncCursorTest {

  @Test
  void aCursorRoundTripsWithItsGroupsSortedById() {
    SyncCursor cursor = SyncCursor.of(41, Map.of("zeta", 3L, "alpha", 0L, "g.1_x@y-z", 9L));
    assertThat(text(cursor.encode())).isEqualTo("v1|41|alpha=0|g.1_x@y-z=9|zeta=3");
    assertThat(SyncCursor.decode(cursor.encode())).isEqualTo(cursor);
    assertThat(SyncCursor.decode(SyncCursor.of(-1, Map.of()).encode())).isEqualTo(SyncCursor.of(-1, Map.of()));
    assertThat(cursor.encode()).doesNotContain("=").doesNotContain("+").doesNotContain("/");
  }

  @Test
  void generationZeroKeepsTheV1LayoutAndALaterOneIsV2WithItsGeneration() {
    // Given the same position in generation 0 and in generation 3
    SyncCursor g0 = SyncCursor.of(41, Map.of("g", 2L));
    SyncCursor g3 = g0.inGeneration(3);
    // Then generation 0 is written as before (deployments that never grew see no change), generation 3 as v2
    assertThat(text(g0.encode())).isEqualTo("v1|41|g=2");
    assertThat(text(g3.encode())).isEqualTo("v2|3|41|g=2");
    assertThat(SyncCursor.decode(g3.encode())).isEqualTo(g3);
    assertThat(SyncCursor.decode(opaque("v2|1|-1"))).isEqualTo(SyncCursor.of(-1, Map.of()).inGeneration(1));
    // And a v1 cursor is one of generation 0: the same seqs in another generation are another position
    assertThat(SyncCursor.decode(g0.encode()).generation()).isZero();
    assertThat(g3).isNotEqualTo(g0);
    assertThat(SyncCursor.decode(g0.encode()).generation()).isLessThan(g3.generation());
    assertThatThrownBy(() -> g0.inGeneration(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void anythingButAnEncodedCursorIsRefused() {
    for (String bad : List.of("v2|1", "v2|0|5", "v2|01|5", "v2|-1|5", "v2|x|5", "v2|1|5|g", "v3|1|5", "v1", "v1|x",
        "v1|-2", "v1|1|g", "v1|1|=3", "v1|1|g=-1", "v1|1|g=x",
        "v1|1|g=1|g=2", "v1|1|g#h=1", "v1|1|" + "g".repeat(129) + "=1", "")) {
      assertThatThrownBy(() -> SyncCursor.decode(opaque(bad))).as(bad)
          .isInstanceOf(IllegalArgumentException.class).hasMessage("not a sync cursor");
    }
    assertThatThrownBy(() -> SyncCursor.decode("not base64 ***")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a sync cursor");
    // The limits themselves are fine: inbox -1, group seq 0, a 128-character group id
    String longest = "g".repeat(128);
    assertThat(SyncCursor.decode(opaque("v1|-1|" + longest + "=0")))
        .isEqualTo(SyncCursor.of(-1, Map.of(longest, 0L)));
  }

  @Test
  void componentsCommitTheInboxUnderTheDeviceAndEachGroupUnderItsOwnDeviceId() {
    assertThat(SyncCursor.of(7, Map.of("g", 2L, "h", 0L)).components("phone"))
        .containsExactly(Map.entry("phone", 7L), Map.entry("phone#g", 2L), Map.entry("phone#h", 0L));
    // an inbox position of -1 commits nothing for the inbox; 0 is a real position
    assertThat(SyncCursor.of(-1, Map.of("g", 2L)).components("phone")).containsExactly(Map.entry("phone#g", 2L));
    assertThat(SyncCursor.of(0, Map.of()).components("phone")).containsExactly(Map.entry("phone", 0L));
  }

  @Test
  void theGroupsOfACursorCannotBeChangedAfterwards() {
    java.util.TreeMap<String, Long> groups = new java.util.TreeMap<>(Map.of("g", 1L));
    SyncCursor cursor = new SyncCursor(3, groups);
    groups.put("h", 2L);
    assertThat(cursor.groups()).containsOnlyKeys("g");
    assertThatThrownBy(() -> cursor.groups().put("h", 2L)).isInstanceOf(UnsupportedOperationException.class);
  }

  private static String opaque(String text) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  private static String text(String opaque) {
    return new String(Base64.getUrlDecoder().decode(opaque), StandardCharsets.UTF_8);
  }
}
