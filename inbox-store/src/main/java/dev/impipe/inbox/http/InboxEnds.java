package dev.impipe.inbox.http;

import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The end offset of each partition of this generation's inbox, read once per partition the first time it is asked
 * for and kept. Asked only after the store serves, so after the grow that made this generation was done (both
 * procedures start a grown generation's inbox store only then): the end read is at or after where the copy ended,
 * and a store that applied the partition up to it has applied every copied entry (see {@code GenerationGate}).
 * Empty when the broker does not answer in time (asked again next time).
 */
final class InboxEnds {

  private static final Logger LOG = LoggerFactory.getLogger(InboxEnds.class);

  private final Admin admin;
  private final String topic;
  private final long timeoutMs;
  private final Map<Integer, Long> ends = new ConcurrentHashMap<>();

  InboxEnds(Admin admin, String topic, long timeoutMs) {
    this.admin = admin;
    this.topic = topic;
    this.timeoutMs = timeoutMs;
  }

  /** The end offset (last stable offset) of {@code partition}, read once and kept; empty when not read. */
  OptionalLong apply(int partition) {
    Long known = ends.get(partition);
    if (known != null) {
      return OptionalLong.of(known);
    }
    TopicPartition tp = new TopicPartition(topic, partition);
    try {
      long end = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
          new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).partitionResult(tp)
          .get(timeoutMs, TimeUnit.MILLISECONDS).offset();
      ends.putIfAbsent(partition, end);
      return OptionalLong.of(end);
    } catch (ExecutionException | TimeoutException e) {
      LOG.debug("End offset of {} not read: {}", tp, e.toString());
      return OptionalLong.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return OptionalLong.empty();
    }
  }
}
