package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.edge.http.Json;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A merged sync page as the backlog reads it. */
class BacklogPageTest {

  @Test
  void readsEntriesPositionsAndLargeGroups() throws Exception {
    // Given a page with an inbox entry, a group timeline entry and one without a source
    String cursor = SyncCursor.of(12, Map.of("g1", 4L)).encode();
    BacklogPage page = BacklogPage.of(Json.MAPPER.readTree("{\"entries\":["
        + "{\"source\":\"inbox\",\"seq\":11,\"messageId\":\"m-11\"},"
        + "{\"source\":\"#g1\",\"seq\":4},"
        + "{\"seq\":12,\"messageId\":7}],"
        + "\"next\":12,\"cursor\":\"" + cursor + "\",\"hasMore\":true,\"largeGroups\":{\"g1\":\"1-\"}}"));

    // Then each entry has its source, seq and message id (only a string one), and the page its positions
    assertThat(page.entries()).extracting(BacklogPage.Entry::source).containsExactly("inbox", "#g1", "inbox");
    assertThat(page.entries()).extracting(BacklogPage.Entry::seq).containsExactly(11L, 4L, 12L);
    assertThat(page.entries()).extracting(BacklogPage.Entry::messageId).containsExactly("m-11", null, null);
    assertThat(page.entries()).extracting(BacklogPage.Entry::inbox).containsExactly(true, false, true);
    assertThat(page.entries().get(0).json().path("messageId").asText()).isEqualTo("m-11");
    assertThat(page.next()).isEqualTo(12);
    assertThat(page.cursor()).isEqualTo(SyncCursor.of(12, Map.of("g1", 4L)));
    assertThat(page.hasMore()).isTrue();
    assertThat(page.largeGroups().path("g1").asText()).isEqualTo("1-");
  }

  @Test
  void anEmptyPageEndsAndKeepsThePositionsPushed() throws Exception {
    BacklogPage page = BacklogPage.of(Json.MAPPER.readTree("{\"entries\":[],\"cursor\":\"not-a-cursor\"}"));
    assertThat(page.entries()).isEmpty();
    assertThat(page.next()).isEqualTo(-1);
    assertThat(page.cursor()).as("an unreadable cursor moves nothing").isNull();
    assertThat(page.hasMore()).isFalse();
    assertThat(page.largeGroups().isMissingNode()).isTrue();
  }
}
