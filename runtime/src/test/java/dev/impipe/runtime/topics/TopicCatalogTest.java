package dev.impipe.runtime.topics;

import static java.util.stream.Collectors.groupingBy;
import static java.util.stream.Collectors.mapping;
import static java.util.stream.Collectors.toSet;
import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.config.ImConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class TopicCatalogTest {

  private static final ImConfig CONFIG = ImConfig.fromEnv(Map.of(
      "IM_TOPIC_PREFIX", "test7.", "IM_CONVERSATION_PARTITIONS", "3", "IM_USER_PARTITIONS", "5"));
  private static final TopicNames NAMES = TopicNames.withPrefix(CONFIG.topicPrefix());

  private static Map<String, TopicSpec> specsByName() {
    return TopicCatalog.specs(NAMES, CONFIG).stream()
        .collect(Collectors.toMap(TopicSpec::name, Function.identity()));
  }

  @Test
  void everyDesignTopicIsCatalogedWithThePrefix() {
    assertThat(TopicCatalog.specs(NAMES, CONFIG)).extracting(TopicSpec::name).containsExactlyInAnyOrder(
        "test7.messages", "test7.group-members", "test7.inbox", "test7.device-cursors", "test7.deliveries",
        "test7.acks", "test7.ack-timeouts", "test7.delayed", "test7.rejected", "test7.history",
        "test7.push-registrations", "test7.notifications");
  }

  @Test
  void defaultPrefixGivesTheDesignNames() {
    TopicNames names = TopicNames.withPrefix(ImConfig.fromEnv(Map.of()).topicPrefix());

    assertThat(names.messages()).isEqualTo("im.messages");
    assertThat(names.groupMembers()).isEqualTo("im.group-members");
    assertThat(names.inbox()).isEqualTo("im.inbox");
    assertThat(names.deviceCursors()).isEqualTo("im.device-cursors");
    assertThat(names.deliveries()).isEqualTo("im.deliveries");
    assertThat(names.acks()).isEqualTo("im.acks");
    assertThat(names.ackTimeouts()).isEqualTo("im.ack-timeouts");
    assertThat(names.delayed()).isEqualTo("im.delayed");
    assertThat(names.rejected()).isEqualTo("im.rejected");
    assertThat(names.history()).isEqualTo("im.history");
    assertThat(names.pushRegistrations()).isEqualTo("im.push-registrations");
    assertThat(names.notifications()).isEqualTo("im.notifications");
  }

  @Test
  void partitionCountsComeFromTheConfig() {
    Map<String, TopicSpec> specs = specsByName();

    assertThat(specs.get("test7.messages").partitions()).isEqualTo(3);
    assertThat(specs.get("test7.group-members").partitions()).isEqualTo(3);
    for (String userKeyed : List.of("inbox", "device-cursors", "deliveries", "acks", "ack-timeouts")) {
      assertThat(specs.get("test7." + userKeyed).partitions()).as(userKeyed).isEqualTo(5);
    }
  }

  @Test
  void coPartitionedTopicsShareAGroupAndAPartitionCount() {
    Map<String, Set<String>> groups = TopicCatalog.specs(NAMES, CONFIG).stream()
        .filter(s -> s.coPartitionGroup() != null)
        .collect(groupingBy(TopicSpec::coPartitionGroup, mapping(TopicSpec::name, toSet())));

    assertThat(groups).containsOnlyKeys(TopicCatalog.CONVERSATION_KEYED, TopicCatalog.USER_KEYED);
    assertThat(groups.get(TopicCatalog.CONVERSATION_KEYED))
        .containsExactlyInAnyOrder("test7.messages", "test7.group-members", "test7.history");
    assertThat(groups.get(TopicCatalog.USER_KEYED)).containsExactlyInAnyOrder(
        "test7.inbox", "test7.device-cursors", "test7.deliveries", "test7.acks", "test7.ack-timeouts",
        "test7.push-registrations", "test7.notifications");

    // Whatever the config, a group never asks for two different partition counts.
    Map<String, Set<Integer>> countsPerGroup = TopicCatalog.specs(NAMES, CONFIG).stream()
        .filter(s -> s.coPartitionGroup() != null)
        .collect(groupingBy(TopicSpec::coPartitionGroup, mapping(TopicSpec::partitions, toSet())));
    assertThat(countsPerGroup.values()).allSatisfy(counts -> assertThat(counts).hasSize(1));
  }

  @Test
  void retentionFollowsTheDesign() {
    Map<String, TopicSpec> specs = specsByName();
    String sevenDays = Long.toString(Duration.ofDays(7).toMillis());

    assertThat(specs.get("test7.inbox").configs())
        .containsEntry("retention.ms", sevenDays)
        .containsEntry("cleanup.policy", "delete");
    // The store timeline is history (roaming): never expires.
    assertThat(specs.get("test7.messages").configs()).containsEntry("retention.ms", "-1");
    // Membership is keyed by group, so compaction would keep one member per group: kept whole instead.
    assertThat(specs.get("test7.group-members").configs())
        .containsEntry("retention.ms", "-1")
        .doesNotContainEntry("cleanup.policy", "compact");
    // History is one key per conversation seq: compacted, so a recall's overwrite replaces the original for good.
    assertThat(specs.get("test7.history").configs()).containsEntry("cleanup.policy", "compact");
    // Rejected records are kept 30 days (README, Topics), long enough to be looked at.
    assertThat(specs.get("test7.rejected").configs())
        .containsEntry("retention.ms", Long.toString(Duration.ofDays(30).toMillis()))
        .containsEntry("cleanup.policy", "delete");
    // The other user-keyed topics and the schedules: 7 days, like the README's table.
    for (String topic : List.of("device-cursors", "deliveries", "acks", "ack-timeouts", "delayed")) {
      assertThat(specs.get("test7." + topic).configs()).as(topic).containsEntry("retention.ms", sevenDays);
    }
    assertThat(specs.values())
        .allSatisfy(spec -> assertThat(spec.configs()).containsKeys("cleanup.policy", "retention.ms"));
  }

  @Test
  void specsAreImmutable() {
    TopicSpec spec = TopicCatalog.specs(NAMES, CONFIG).get(0);

    assertThat(spec.configs()).isUnmodifiable();
    assertThat(Objects.requireNonNull(TopicCatalog.specs(NAMES, CONFIG))).isUnmodifiable();
  }
}
