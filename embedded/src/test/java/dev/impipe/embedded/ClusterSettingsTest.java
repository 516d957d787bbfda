package dev.impipe.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.app.StreamsDefaults;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.runtime.topics.TopicSpec;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The replication settings of a multi-broker cluster: one broker may go, no acknowledged write with it. */
class ClusterSettingsTest {

  @Test
  void threeBrokersReplicateEverythingThreeTimesAndAcknowledgeOnTwo() {
    Map<String, String> s = ClusterNodeMain.brokerSettings(3);
    assertThat(s).containsEntry("default.replication.factor", "3").containsEntry("min.insync.replicas", "2")
        .containsEntry("offsets.topic.replication.factor", "3")
        .containsEntry("transaction.state.log.replication.factor", "3")
        .containsEntry("transaction.state.log.min.isr", "2")
        .containsEntry("share.coordinator.state.topic.replication.factor", "3")
        .containsEntry("share.coordinator.state.topic.min.isr", "2")
        .containsEntry("unclean.leader.election.enable", "false");
  }

  @Test
  void fewerBrokersCapTheReplicationAtTheirNumber() {
    assertThat(ClusterNodeMain.brokerSettings(2)).containsEntry("default.replication.factor", "2")
        .containsEntry("min.insync.replicas", "1").containsEntry("transaction.state.log.min.isr", "1");
    assertThat(ClusterNodeMain.brokerSettings(5)).containsEntry("default.replication.factor", "3")
        .containsEntry("min.insync.replicas", "2");
  }

  @Test
  void minInsyncReplicasIsTwoFromThreeReplicasOn() {
    assertThat(ClusterNodeMain.minInsyncReplicas(1)).isEqualTo(1);
    assertThat(ClusterNodeMain.minInsyncReplicas(2)).isEqualTo(1);
    assertThat(ClusterNodeMain.minInsyncReplicas(3)).isEqualTo(2);
    assertThat(ClusterNodeMain.minInsyncReplicas(5)).isEqualTo(2);
  }

  @Test
  void createdTopicsGetMinInsyncReplicasTwoOnlyWithThreeReplicas() {
    TopicSpec spec = new TopicSpec("im.inbox", 3, Map.of("cleanup.policy", "delete"), null);
    assertThat(new TopicProvisioner(null, (short) 3).configs(spec))
        .containsEntry("min.insync.replicas", "2").containsEntry("cleanup.policy", "delete");
    assertThat(new TopicProvisioner(null, (short) 1).configs(spec)).doesNotContainKey("min.insync.replicas");
    TopicSpec explicit = new TopicSpec("im.x", 3, Map.of("min.insync.replicas", "3"), null);
    assertThat(new TopicProvisioner(null, (short) 3).configs(explicit)).containsEntry("min.insync.replicas", "3");
  }

  @Test
  void streamsInternalTopicsFollowTheReplicationFactor() {
    Properties three = StreamsDefaults.properties(ImConfig.fromEnv(Map.of("IM_REPLICATION_FACTOR", "3")),
        TopicNames.withPrefix("im."), "fanout");
    assertThat(three).containsEntry("replication.factor", 3).containsEntry("topic.min.insync.replicas", "2");
    Properties one = StreamsDefaults.properties(ImConfig.fromEnv(Map.of()), TopicNames.withPrefix("im."), "fanout");
    assertThat(one).containsEntry("replication.factor", 1).doesNotContainKey("topic.min.insync.replicas");
  }
}
