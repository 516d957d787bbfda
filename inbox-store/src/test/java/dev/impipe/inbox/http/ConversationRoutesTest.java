package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.edge.auth.Principal;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The conversation routes' own checks (the routes themselves run in ConversationListIT). */
class ConversationRoutesTest {

  @Test
  void settingsAreForTheUsersOwnConversationsOnly() {
    assertThat(ConversationRoutes.invalidConversation("alice", "d:alice:bob")).isNull();
    assertThat(ConversationRoutes.invalidConversation("alice", "team")).isNull();
    assertThat(ConversationRoutes.invalidConversation("carol", "d:alice:bob")).contains("not a party");
    assertThat(ConversationRoutes.invalidConversation("alice", "d:bob:alice")).contains("sorted");
    assertThat(ConversationRoutes.invalidConversation("alice", "d:alice")).contains("sorted");
    assertThat(ConversationRoutes.invalidConversation("alice", "#team")).contains("not a conversation id");
  }

  @Test
  void aDisabledListAnswers404WithItsReason() {
    // Given the list disabled (IM_CONVERSATIONS_ENABLED=false), when any of its routes is called
    Request get = new Request("GET", "/v1/users/alice/conversations", Map.of("userId", "alice"), Map.of(), Map.of(),
        new byte[0], "/v1/users/alice/conversations",
        new Principal("alice", Optional.empty(), Instant.now().plusSeconds(60), "t"), OptionalLong.empty());
    // Then it answers 404 {"error": "the conversation list is disabled"}
    assertThatThrownBy(() -> ConversationRoutes.disabled(get)).isInstanceOfSatisfying(HttpError.class, e -> {
      assertThat(e.status()).isEqualTo(404);
      assertThat(e.getMessage()).isEqualTo("the conversation list is disabled");
    });
  }

  @Test
  void rangesAreWrittenAsTheMergedSyncWritesThem() {
    assertThat(ConversationRoutes.rangesText(List.of(new long[] {1, 5}, new long[] {8, Long.MAX_VALUE})))
        .isEqualTo("1-5,8-");
    assertThat(ConversationRoutes.rangesText(List.of())).isEmpty();
  }
}
