package dev.impipe.runtime.topics;

import dev.impipe.runtime.Backoff;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Creates missing topics with their configs and verifies existing ones; fails clearly on a mismatch. */
public final class TopicProvisioner {

  private static final Logger LOG = LoggerFactory.getLogger(TopicProvisioner.class);
  private static final long TIMEOUT_S = 60;
  /** The pause between checks while waiting for topic metadata or leaders (each wait bounded by a deadline). */
  private static final Backoff POLL = Backoff.fixed(java.time.Duration.ofMillis(100));

  private final Admin admin;
  private final short replicationFactor;

  public TopicProvisioner(Admin admin, short replicationFactor) {
    this.admin = admin;
    this.replicationFactor = replicationFactor;
  }

  /** Makes every topic of {@code specs} exist as specified; returns the names it created. */
  public List<String> ensure(Collection<TopicSpec> specs) {
    try {
      Set<String> existing = admin.listTopics().names().get(TIMEOUT_S, TimeUnit.SECONDS);
      List<NewTopic> missing = new ArrayList<>();
      for (TopicSpec spec : specs) {
        if (!existing.contains(spec.name())) {
          missing.add(new NewTopic(spec.name(), spec.partitions(), replicationFactor).configs(configs(spec)));
        }
      }
      if (!missing.isEmpty()) {
        admin.createTopics(missing).values().forEach((name, future) -> {
          try {
            future.get(TIMEOUT_S, TimeUnit.SECONDS);
          } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
              throw new TopicMismatchException("Cannot create topic " + name + ": " + e.getCause().getMessage());
            }
          } catch (InterruptedException | TimeoutException e) {
            throw new TopicMismatchException("Timed out creating topic " + name);
          }
        });
      }
      // Leaders first: right after creation a broker may not know the new topics yet, and describing them would
      // fail with UNKNOWN_TOPIC_OR_PARTITION (seen on busy machines).
      awaitLeaders(admin, missing.stream().map(NewTopic::name).toList(), java.time.Duration.ofSeconds(60));
      verifyWhenKnown(specs);
      return missing.stream().map(NewTopic::name).toList();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TopicMismatchException("Interrupted while provisioning topics");
    } catch (ExecutionException | TimeoutException e) {
      throw new TopicMismatchException("Cannot list topics: " + e);
    }
  }

  /**
   * The spec's configs, plus {@code min.insync.replicas=2} from a replication factor of 3 on: an acknowledged
   * (acks=all, transactional) write is then on two brokers at least, so losing one broker loses nothing.
   */
  public Map<String, String> configs(TopicSpec spec) {
    Map<String, String> configs = new HashMap<>(spec.configs());
    if (replicationFactor >= 3) {
      configs.putIfAbsent("min.insync.replicas", "2");
    }
    return configs;
  }

  /** {@link #verify}, retried for a while when a broker does not know a topic yet (metadata still propagating). */
  private void verifyWhenKnown(Collection<TopicSpec> specs)
      throws InterruptedException, ExecutionException, TimeoutException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        verify(specs);
        return;
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)
            || System.nanoTime() > deadline) {
          throw e;
        }
        // metadata propagation between controller and broker: poll, bounded by the deadline
        Thread.sleep(POLL.nextMs(0));
      }
    }
  }

  /**
   * Waits until every partition of {@code topics} is served by its leader (a list-offsets request answers), so the
   * first producer does not meet NOT_LEADER_OR_FOLLOWER on a topic that was created a moment ago.
   */
  public static void awaitLeaders(Admin admin, Collection<String> topics, java.time.Duration timeout) {
    if (topics.isEmpty()) {
      return;
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try {
        Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> request =
            new HashMap<>();
        admin.describeTopics(topics).allTopicNames().get(TIMEOUT_S, TimeUnit.SECONDS).values()
            .forEach(d -> d.partitions().forEach(p -> request.put(new org.apache.kafka.common.TopicPartition(d.name(),
                p.partition()), org.apache.kafka.clients.admin.OffsetSpec.latest())));
        admin.listOffsets(request).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        return;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new TopicMismatchException("Interrupted while waiting for the leaders of " + topics);
      } catch (ExecutionException | TimeoutException e) {
        last = e;
        try {
          Thread.sleep(POLL.nextMs(0));
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new TopicMismatchException("Interrupted while waiting for the leaders of " + topics);
        }
      }
    }
    throw new TopicMismatchException("Partitions of " + topics + " have no serving leader after "
        + timeout.toSeconds() + " s: " + last);
  }

  /** Checks configs and co-partitioning of the topics as they now exist. */
  public void verify(Collection<TopicSpec> specs) throws InterruptedException, ExecutionException, TimeoutException {
    List<String> names = specs.stream().map(TopicSpec::name).toList();
    Map<String, TopicDescription> descriptions =
        admin.describeTopics(names).allTopicNames().get(TIMEOUT_S, TimeUnit.SECONDS);
    Map<ConfigResource, Config> configs = admin.describeConfigs(names.stream()
        .map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n)).toList()).all().get(TIMEOUT_S, TimeUnit.SECONDS);

    List<String> problems = new ArrayList<>();
    Map<String, Map<String, Integer>> groups = new HashMap<>();
    for (TopicSpec spec : specs) {
      int partitions = descriptions.get(spec.name()).partitions().size();
      if (spec.coPartitionGroup() != null) {
        groups.computeIfAbsent(spec.coPartitionGroup(), g -> new TreeMap<>()).put(spec.name(), partitions);
      }
      if (partitions != spec.partitions()) {
        LOG.warn("Topic {} has {} partitions, configured {}: keeping the existing count", spec.name(), partitions,
            spec.partitions());
      }
      String policy = configs.get(new ConfigResource(ConfigResource.Type.TOPIC, spec.name()))
          .get("cleanup.policy").value();
      String wanted = spec.configs().get("cleanup.policy");
      if (wanted != null && !wanted.equals(policy)) {
        problems.add(spec.name() + " has cleanup.policy=" + policy + ", expected " + wanted);
      }
    }
    groups.forEach((group, counts) -> {
      if (counts.values().stream().distinct().count() > 1) {
        problems.add("topics keyed by " + group + " id must be co-partitioned (equal partition counts), but "
            + counts.entrySet().stream().map(e -> e.getKey() + " has " + e.getValue())
                .collect(Collectors.joining(", ")));
      }
    });
    if (!problems.isEmpty()) {
      throw new TopicMismatchException("Existing topics do not match the pipeline's needs:\n  "
          + String.join("\n  ", problems));
    }
  }
}
