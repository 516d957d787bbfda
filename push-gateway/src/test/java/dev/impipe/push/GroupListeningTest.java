package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.edge.http.Json;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which large groups a connection listens to, and what its next page waits for. */
class GroupListeningTest {

  private final List<String> calls = new ArrayList<>();
  private final GroupListening listening = new GroupListening(new GroupListening.Subscriptions() {
    @Override
    public void subscribe(String group) {
      calls.add("+" + group);
    }

    @Override
    public void unsubscribe(String group) {
      calls.add("-" + group);
    }

    @Override
    public long seen(String group) {
      return group.equals("g1") ? 41 : -1;
    }
  }, () -> "test");

  @Test
  void aPageListingGroupsSubscribesNewOnesAndTheNextPageWaitsForWhatTheReaderPassed() throws Exception {
    // When a page says the user reads g1 and g2
    listening.readLargeGroups(Json.MAPPER.readTree(
        "[{\"groupId\":\"g1\",\"ranges\":\"5-\",\"through\":10},{\"groupId\":\"g2\",\"ranges\":\"1-\",\"through\":10}]"));

    // Then both are subscribed, and the next page waits for the offsets the reader passed in them
    assertThat(calls).containsExactlyInAnyOrder("+g1", "+g2");
    assertThat(listening.feed("g1")).isNotNull();
    assertThat(listening.waiting()).isTrue();
    assertThat(listening.takeMinSeqs()).containsEntry("g1", 41L).containsEntry("g2", -1L);
    assertThat(listening.waiting()).isFalse();

    // When the next page lists only g1: g2 is dropped, g1 kept without subscribing again
    calls.clear();
    listening.readLargeGroups(Json.MAPPER.readTree("[{\"groupId\":\"g1\",\"ranges\":\"5-\",\"through\":11}]"));
    assertThat(calls).containsExactly("-g2");
    assertThat(listening.feed("g2")).isNull();

    // When the connection closes, every subscription goes
    listening.stopAll();
    assertThat(calls).containsExactly("-g2", "-g1");
  }

  @Test
  void anUndecodableTimelineRecordMakesTheNextPageWaitForItsOffset() {
    listening.waitFor("g9", 7);
    listening.waitFor("g9", 3);
    assertThat(listening.takeMinSeqs()).containsExactly(java.util.Map.entry("g9", 7L));
  }

  @Test
  void aReadDiffusionJoinOnAPageStartsListening() throws Exception {
    listening.applyMembership(20, Json.MAPPER.readTree("{\"type\":\"CONVERSATION_JOINED\",\"conversationId\":\"g3\","
        + "\"timelineFromSeq\":4,\"readDiffusion\":true}"));
    assertThat(calls).containsExactly("+g3");
    // a direct conversation or a non-membership entry changes nothing
    listening.applyMembership(21, Json.MAPPER.readTree("{\"type\":\"MESSAGE\",\"conversationId\":\"g4\"}"));
    assertThat(calls).containsExactly("+g3");
  }
}
