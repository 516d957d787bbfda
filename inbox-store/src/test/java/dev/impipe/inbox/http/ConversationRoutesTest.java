package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
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
  void rangesAreWrittenAsTheMergedSyncWritesThem() {
    assertThat(ConversationRoutes.rangesText(List.of(new long[] {1, 5}, new long[] {8, Long.MAX_VALUE})))
        .isEqualTo("1-5,8-");
    assertThat(ConversationRoutes.rangesText(List.of())).isEmpty();
  }
}
