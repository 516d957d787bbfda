package dev.impipe.runtime.topics;

import java.util.Map;

/**
 * How a topic must look.
 *
 * @param name topic name
 * @param partitions partition count used when creating it
 * @param configs topic configs set at creation and checked on existing topics
 * @param coPartitionGroup topics with the same non-null group must have equal partition counts
 */
public record TopicSpec(String name, int partitions, Map<String, String> configs, String coPartitionGroup) {
  public TopicSpec {
    configs = Map.copyOf(configs);
  }
}
