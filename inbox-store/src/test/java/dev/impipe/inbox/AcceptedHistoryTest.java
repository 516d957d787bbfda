package dev.impipe.inbox;

import static dev.impipe.inbox.FanoutThenStore.message;
import static dev.impipe.inbox.FanoutThenStore.recall;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.MembershipOp;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.inbox.query.HistoryAccess;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.Timelines;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * History holds exactly what the fan-out accepted: never a non-member's post, a forged recall
 * or a retried duplicate; a recalled message's body is gone from it. Fan-out and inbox store chained as in production.
 */
class AcceptedHistoryTest {

  @TempDir
  Path stateDir;

  private FanoutThenStore pipeline;

  @BeforeEach
  void setUp() {
    pipeline = new FanoutThenStore(stateDir, FanoutConfig.defaults().withLargeGroupThreshold(0),
        InboxStoreConfig.defaults());
  }

  @AfterEach
  void tearDown() {
    pipeline.close();
  }

  @Test
  void historyHoldsOnlyWhatTheFanoutAcceptedInConversationOrder() {
    // Given alice created g and added bob
    pipeline.change("alice", "g", "alice", MembershipOp.JOIN);
    pipeline.change("alice", "g", "bob", MembershipOp.JOIN);
    // When alice posts (seq 0), mallory (no member) posts (1), alice's post is retried (2),
    // bob forges a recall of alice's post (3), and bob posts (4)
    ChatMessage hello = message("alice", "g", "c-1", "hello");
    long helloSeq = pipeline.publish(hello);
    pipeline.publish(message("mallory", "g", "c-1", "spam"));
    pipeline.publish(hello);
    pipeline.publish(recall("bob", "g", "c-r", hello.getMessageId()));
    long bobsSeq = pipeline.publish(message("bob", "g", "c-2", "hi"));

    // Then alice's history holds alice's and bob's posts only, newest first, at their conversation seqs
    Page<ChatMessage> history = history("alice", "g");
    assertThat(seqs(history)).containsExactly(bobsSeq, helloSeq);
    assertThat(history.entries()).extracting(e -> e.value().getBody()).containsExactly("hi", "hello");
  }

  @Test
  void aRecalledBodyIsNoLongerInHistory() {
    // Given alice and bob in g, and alice's post
    pipeline.change("alice", "g", "alice", MembershipOp.JOIN);
    pipeline.change("alice", "g", "bob", MembershipOp.JOIN);
    ChatMessage secret = message("alice", "g", "c-1", "secret");
    long secretSeq = pipeline.publish(secret);

    // When alice recalls it
    long recallSeq = pipeline.publish(recall("alice", "g", "c-2", secret.getMessageId()));

    // Then bob's history still shows that a message was there, and the recall, but not its body
    Page<ChatMessage> history = history("bob", "g");
    assertThat(seqs(history)).containsExactly(recallSeq, secretSeq);
    ChatMessage recalled = history.entries().get(1).value();
    assertThat(recalled.getMessageId()).isEqualTo(secret.getMessageId());
    assertThat(recalled.getBody()).isNull();
  }

  private Page<ChatMessage> history(String user, String conversation) {
    long from = HistoryAccess.from(pipeline.storeView(InboxStoreTopology.MEMBERSHIPS_STORE), user, conversation)
        .orElseThrow();
    return Timelines.before(pipeline.storeView(InboxStoreTopology.TIMELINE_STORE), conversation,
        OptionalLong.empty(), 100, from);
  }

  private static List<Long> seqs(Page<?> page) {
    return page.entries().stream().map(Page.Entry::seq).toList();
  }
}
