package dev.impipe.inbox;

import static dev.impipe.inbox.FanoutThenStore.message;
import static dev.impipe.inbox.FanoutThenStore.recall;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.MembershipOp;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.inbox.http.JsonViews;
import dev.impipe.inbox.query.Page;
import dev.impipe.inbox.query.Timelines;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A recalled message's body is no longer served by any later sync. The recipients' stored
 * MESSAGE entry (or the large group's timeline entry) loses its body and is marked recalled; a member who left
 * after the message, added back or not, whose inbox still holds it, is covered too.
 */
class RecalledBodyTest {

  @TempDir
  Path stateDir;

  @Test
  void aRecalledMessageIsServedWithoutBodyInEveryLaterSyncOfItsRecipientsIncludingOnesWhoLeftAndRejoined() {
    try (FanoutThenStore pipeline = new FanoutThenStore(stateDir, FanoutConfig.defaults().withLargeGroupThreshold(0),
        InboxStoreConfig.defaults())) {
      // Given g1 = {alice, bob}, alice's message, then bob leaves and is added back
      ChatMessage secret = aliceAndBobInG1AndAlicesSecret(pipeline);
      pipeline.change("bob", "g1", "bob", MembershipOp.LEAVE);
      pipeline.change("alice", "g1", "bob", MembershipOp.JOIN);

      // When alice recalls it
      ChatMessage withdraw = recall("alice", "g1", "c-2", secret.getMessageId());
      pipeline.publish(withdraw);

      // Then neither alice's nor bob's sync serves the body any more: the entry is marked recalled
      for (String user : List.of("alice", "bob")) {
        Page.Entry<InboxEntry> original = messageEntry(pipeline, user, secret.getMessageId());
        assertThat(original.value().getBody()).as(user).isNull();
        assertThat(original.value().getRecalledBy()).as(user).isEqualTo(withdraw.getMessageId());
        Map<String, Object> json = JsonViews.inboxEntry(original.seq(), original.value());
        assertThat(json).containsEntry("body", null).containsEntry("recalled", true);
      }
    }
  }

  @Test
  void aRecalledMessageLosesItsBodyInTheInboxOfAMemberWhoLeftAndWasNotAddedBack() {
    try (FanoutThenStore pipeline = new FanoutThenStore(stateDir, FanoutConfig.defaults().withLargeGroupThreshold(0),
        InboxStoreConfig.defaults())) {
      // Given g1 = {alice, bob}, alice's message, then bob leaves for good
      ChatMessage secret = aliceAndBobInG1AndAlicesSecret(pipeline);
      pipeline.change("bob", "g1", "bob", MembershipOp.LEAVE);

      // When alice recalls it
      ChatMessage withdraw = recall("alice", "g1", "c-2", secret.getMessageId());
      pipeline.publish(withdraw);

      // Then bob's inbox, which he still syncs, no longer serves the body
      Page.Entry<InboxEntry> original = messageEntry(pipeline, "bob", secret.getMessageId());
      assertThat(original.value().getBody()).isNull();
      assertThat(original.value().getRecalledBy()).isEqualTo(withdraw.getMessageId());
    }
  }

  @Test
  void aRecallInALargeGroupRemovesTheBodyFromTheGroupsTimeline() {
    try (FanoutThenStore pipeline = new FanoutThenStore(stateDir, FanoutConfig.defaults().withLargeGroupThreshold(1),
        InboxStoreConfig.defaults())) {
      // Given a large group (2 members, threshold 1) and two messages in its timeline
      pipeline.change("alice", "g1", "alice", MembershipOp.JOIN);
      pipeline.change("alice", "g1", "bob", MembershipOp.JOIN);
      ChatMessage kept = message("bob", "g1", "c-1", "stays");
      ChatMessage secret = message("alice", "g1", "c-2", "the secret");
      pipeline.publish(kept);
      pipeline.publish(secret);

      // When alice recalls hers
      pipeline.publish(recall("alice", "g1", "c-3", secret.getMessageId()));

      // Then the timeline serves it without body, and bob's message as it was
      assertThat(messageEntry(pipeline, "#g1", secret.getMessageId()).value().getBody()).isNull();
      assertThat(messageEntry(pipeline, "#g1", kept.getMessageId()).value().getBody()).isEqualTo("stays");
    }
  }

  /** g1 = {alice (admin), bob} in write diffusion, and alice's message "the secret" (clientMsgId c-1) to it. */
  private static ChatMessage aliceAndBobInG1AndAlicesSecret(FanoutThenStore pipeline) {
    pipeline.change("alice", "g1", "alice", MembershipOp.JOIN);
    pipeline.change("alice", "g1", "bob", MembershipOp.JOIN);
    ChatMessage secret = message("alice", "g1", "c-1", "the secret");
    pipeline.publish(secret);
    return secret;
  }

  private static Page.Entry<InboxEntry> messageEntry(FanoutThenStore pipeline, String owner, String messageId) {
    Page<InboxEntry> page = Timelines.after(pipeline.storeView(InboxStoreTopology.INBOX_STORE), owner, -1, 100);
    return page.entries().stream().filter(e -> e.value().getType() == InboxEntryType.MESSAGE
        && messageId.equals(e.value().getMessageId())).findFirst().orElseThrow();
  }
}
