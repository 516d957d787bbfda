package dev.impipe.runtime.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.topics.TopicNames;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.Test;

class ComponentAclsTest {

  private static final TopicNames NAMES = TopicNames.withPrefix("im.");

  @Test
  void everyComponentHasARowAndEveryStreamsAppIsMarked() {
    assertThat(ComponentAcls.table(NAMES)).extracting(ComponentAcls::component)
        .containsExactly("ingest", "fanout", "inbox-store", "ack-timeout", "delay", "push-gateway", "notify");
    assertThat(ComponentAcls.table(NAMES).stream().filter(ComponentAcls::streamsApp).map(ComponentAcls::component))
        .containsExactlyInAnyOrder("fanout", "inbox-store", "ack-timeout", "delay", "notify");
    assertThat(ComponentAcls.of(NAMES, "fanout").orElseThrow().principalName()).isEqualTo("im-fanout");
    assertThat(ComponentAcls.of(NAMES, "nope")).isEmpty();
  }

  @Test
  void theSyncComponentMayNotWriteGroupMembersAndOnlyTheDelayTopologyReadsDelayed() {
    ComponentAcls inbox = ComponentAcls.of(NAMES, "inbox-store").orElseThrow();
    assertThat(inbox.writes()).containsExactlyInAnyOrder("im.device-cursors", "im.rejected");
    assertThat(inbox.reads()).containsExactlyInAnyOrder("im.inbox", "im.history", "im.device-cursors");
    assertThat(ComponentAcls.table(NAMES).stream().filter(c -> c.reads().contains("im.delayed"))
        .map(ComponentAcls::component)).containsExactly("delay");
    assertThat(ComponentAcls.of(NAMES, "delay").orElseThrow().writes())
        .containsExactlyInAnyOrder("im.messages", "im.inbox", "im.rejected");
    // Every component may write a bad record to the rejected topic.
    assertThat(ComponentAcls.table(NAMES)).allMatch(c -> c.writes().contains("im.rejected"));
  }

  @Test
  void aStreamsAppsBindingsAreLiteralTopicsPlusItsApplicationIdFollowedByADash() {
    List<AclBinding> acls = ComponentAcls.of(NAMES, "ack-timeout").orElseThrow().bindings("im.");

    assertThat(acls).allMatch(b -> b.entry().principal().equals("User:im-ack-timeout")
        && b.entry().permissionType() == AclPermissionType.ALLOW && b.entry().host().equals("*"));
    assertThat(render(acls)).containsExactlyInAnyOrder(
        "TOPIC PREFIXED im. DESCRIBE", "TOPIC PREFIXED im. DESCRIBE_CONFIGS",
        "TOPIC LITERAL im.acks READ", "TOPIC LITERAL im.deliveries READ",
        "TOPIC LITERAL im.ack-timeouts WRITE", "TOPIC LITERAL im.rejected WRITE",
        "TOPIC PREFIXED im.ack-timeout- ALL",
        "GROUP LITERAL im.ack-timeout READ", "GROUP LITERAL im.ack-timeout DESCRIBE",
        "TRANSACTIONAL_ID PREFIXED im.ack-timeout- WRITE", "TRANSACTIONAL_ID PREFIXED im.ack-timeout- DESCRIBE");
    // The internal-topic prefix does not reach the pipeline topic that starts with the same name.
    assertThat("im.ack-timeouts").doesNotStartWith("im.ack-timeout-");
    assertThat(prefixes(ComponentAcls.of(NAMES, "delay").orElseThrow().bindings("im."), ResourceType.TOPIC))
        .containsExactlyInAnyOrder("im.", "im.delay-");
    assertThat("im.delayed").doesNotStartWith("im.delay-");
  }

  @Test
  void aComponentWithoutStreamsAppHasNoGroupOrTransactionalIdAndAnEmptyPrefixDescribesAllTopics() {
    List<AclBinding> acls = ComponentAcls.of(TopicNames.withPrefix(""), "push-gateway").orElseThrow().bindings("");
    assertThat(render(acls)).containsExactlyInAnyOrder(
        "TOPIC LITERAL * DESCRIBE", "TOPIC LITERAL * DESCRIBE_CONFIGS",
        "TOPIC LITERAL inbox READ", "TOPIC LITERAL ack-timeouts READ",
        "TOPIC LITERAL deliveries WRITE", "TOPIC LITERAL acks WRITE", "TOPIC LITERAL device-cursors WRITE",
        "TOPIC LITERAL rejected WRITE");
    assertThat(render(ComponentAcls.describeOnly("im-launcher", "x.")))
        .containsExactly("TOPIC PREFIXED x. DESCRIBE", "TOPIC PREFIXED x. DESCRIBE_CONFIGS");
  }

  private static List<String> render(List<AclBinding> acls) {
    return acls.stream().map(b -> b.pattern().resourceType() + " " + b.pattern().patternType() + " "
        + b.pattern().name() + " " + b.entry().operation()).toList();
  }

  private static Set<String> prefixes(List<AclBinding> acls, ResourceType type) {
    return acls.stream().filter(b -> b.pattern().resourceType() == type
        && b.pattern().patternType() == PatternType.PREFIXED).map(b -> b.pattern().name())
        .collect(Collectors.toSet());
  }

  @Test
  void aLaterGenerationGrantsItsTopicsAndItsApplicationIds() {
    // Given the names of inbox generation 1
    TopicNames g1 = NAMES.inGeneration(1);

    // Then the user-keyed topics granted are the generation's, and so are the user-keyed apps' ids and groups
    ComponentAcls inbox = ComponentAcls.of(g1, "inbox-store").orElseThrow();
    assertThat(inbox.reads()).containsExactlyInAnyOrder("im.inbox.g1", "im.history", "im.device-cursors.g1");
    assertThat(inbox.applicationId("im.")).isEqualTo("im.inbox-store.g1");
    assertThat(ComponentAcls.of(g1, "notify").orElseThrow().consumerGroup("im.", ComponentAcls.NOTIFY_SENDERS_GROUP))
        .isEqualTo("im.notify.g1-senders");
    assertThat(ComponentAcls.of(g1, "fanout").orElseThrow().applicationId("im.")).isEqualTo("im.fanout");
    assertThat(ComponentAcls.of(g1, "fanout").orElseThrow().writes()).contains("im.inbox.g1");
    // an online switch from g1: the fan-out writes g2's inbox once it is live, and follows and fences the control topic
    assertThat(ComponentAcls.of(g1, "fanout").orElseThrow().writes()).contains("im.inbox.g2", "im.inbox-generation");
    assertThat(ComponentAcls.of(g1, "fanout").orElseThrow().reads()).contains("im.inbox-generation");
    assertThat(ComponentAcls.of(NAMES, "inbox-store").orElseThrow().applicationId("im.")).isEqualTo("im.inbox-store");
  }
}
