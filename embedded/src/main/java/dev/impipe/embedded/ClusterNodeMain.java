package dev.impipe.embedded;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * One Kafka node of {@code bin/im local --brokers N}, in a JVM of its own so that it can be killed from outside:
 * {@code ClusterNodeMain --node-id 1 --nodes 3 --data-dir D --port P --controller-port C --voters V --cluster-id X}
 * [{@code --admin-password-file F}: SASL/SCRAM and the StandardAuthorizer, {@link BrokerSecurity}].
 * Prints {@link #READY} once its broker answers; SIGTERM shuts it down in order (controlled shutdown: its partition
 * leaders move to the other nodes first), SIGKILL is a crash.
 */
public final class ClusterNodeMain {

  /** The line a node prints once it serves clients; launchers wait for it. */
  public static final String READY = "IM-KAFKA-NODE-READY";

  private ClusterNodeMain() {}

  /**
   * Broker settings of an {@code nodes}-node cluster: replication factor 3 (at most {@code nodes}) for the
   * consumer-offset and transaction logs, {@code min.insync.replicas} = {@link #minInsyncReplicas(int)}, so
   * exactly-once transactions and acks=all writes survive the loss of one node without losing an acknowledged
   * write.
   */
  public static Map<String, String> brokerSettings(int nodes) {
    String rf = Integer.toString(Math.min(3, nodes));
    String minIsr = Integer.toString(minInsyncReplicas(Math.min(3, nodes)));
    Map<String, String> s = new HashMap<>();
    s.put("offsets.topic.replication.factor", rf);
    s.put("transaction.state.log.replication.factor", rf);
    s.put("transaction.state.log.min.isr", minIsr);
    s.put("share.coordinator.state.topic.replication.factor", rf);
    s.put("share.coordinator.state.topic.min.isr", minIsr);
    s.put("default.replication.factor", rf);
    s.put("min.insync.replicas", minIsr);
    s.put("unclean.leader.election.enable", "false");
    return s;
  }

  /** 2 for a replication factor of 3 or more (one replica may be lost, no acked write is), else 1. */
  public static int minInsyncReplicas(int replicationFactor) {
    return replicationFactor >= 3 ? 2 : 1;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("unexpected argument " + args[i]);
      }
      a.put(args[i].substring(2), args[i + 1]);
    }
    if (a.containsKey("parent-pid")) {
      // The launcher is gone (even by SIGKILL): stop too (the shutdown hook closes the broker in order).
      ProcessHandle.of(Long.parseLong(a.get("parent-pid"))).ifPresentOrElse(
          p -> p.onExit().thenRun(() -> System.exit(0)), () -> System.exit(0));
    }
    int nodes = Integer.parseInt(a.getOrDefault("nodes", "3"));
    // SASL/SCRAM + StandardAuthorizer when given the admin's password file (not the password: not in ps).
    java.util.Optional<BrokerSecurity> security = a.containsKey("admin-password-file")
        ? java.util.Optional.of(BrokerSecurity.fromFile(Path.of(a.get("admin-password-file"))))
        : java.util.Optional.empty();
    EmbeddedKafka kafka = EmbeddedKafka.start(Path.of(a.get("data-dir")), false,
        Integer.parseInt(a.get("node-id")), Integer.parseInt(a.get("port")),
        Integer.parseInt(a.get("controller-port")), a.get("voters"), a.get("cluster-id"), brokerSettings(nodes),
        security);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      kafka.close();
      stopped.countDown();
    }, "kafka-node-shutdown"));
    System.out.println(READY + " node " + a.get("node-id") + " at " + kafka.bootstrapServers());
    System.out.flush();
    stopped.await();
  }
}
