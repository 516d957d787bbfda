package dev.impipe.inbox.http;

import static dev.impipe.inbox.InboxStoreTopology.INBOX_STORE;

import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.inbox.query.InteractiveQueryView;
import dev.impipe.inbox.query.NotServableException;
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
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this instance's inbox store has applied every entry the grow copied into a partition of this generation's
 * inbox, judged by the partition's end offset (last stable offset), read once per partition the first time it is
 * asked for and kept (asked again when the broker does not answer in time). Asked only after the store serves, so
 * after the grow that made this generation was done (both procedures start a grown generation's inbox store only
 * then): the end read is after the copy's last entry and its commit marker (the copy writes in transactions), so a
 * store that applied the record at end - 2 has applied that entry. One whose last applied record is older (the
 * newest ones were not entries) is told no: nothing is guessed (see {@code GenerationGate}).
 */
final class InboxEnds {

  private static final Logger LOG = LoggerFactory.getLogger(InboxEnds.class);

  private final Admin admin;
  private final KafkaStreams streams;
  private final String topic;
  private final long timeoutMs;
  private final Map<Integer, Long> ends = new ConcurrentHashMap<>();

  InboxEnds(Admin admin, KafkaStreams streams, String topic, long timeoutMs) {
    this.admin = admin;
    this.streams = streams;
    this.topic = topic;
    this.timeoutMs = timeoutMs;
  }

  /** Whether the store of {@code partition} here has applied every copied entry (see above). */
  boolean copyApplied(int partition) {
    OptionalLong end = end(partition);
    if (end.isEmpty()) {
      return false;
    }
    if (end.getAsLong() < 2) {
      return true; // no transaction ever wrote here: nothing was copied
    }
    try {
      InteractiveQueryView.<InboxEntry>atLeast(streams, INBOX_STORE, partition, topic, end.getAsLong() - 2)
          .get(StoreKeys.copyApplied());
      return true;
    } catch (NotServableException e) {
      if (e.reason() == NotServableException.Reason.BEHIND) {
        return false;
      }
      throw e;
    }
  }

  /** The end offset (last stable offset) of {@code partition}, read once and kept; empty when not read. */
  private OptionalLong end(int partition) {
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
