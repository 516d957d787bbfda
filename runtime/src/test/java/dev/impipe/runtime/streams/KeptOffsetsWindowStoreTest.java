package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The offsets of a RocksDB window store without segments, over Kafka Streams' own store (exactly-once, initialised by
 * a mock context): kept across a clean close, never across a crash.
 */
class KeptOffsetsWindowStoreTest {

  private static final String NAME = "win";
  private static final TopicPartition CHANGELOG = new TopicPartition("app-win-changelog", 0);

  @TempDir
  Path stateDir;

  private final List<WindowStore<Bytes, byte[]>> opened = new ArrayList<>();

  @AfterEach
  void closeStores() {
    opened.forEach(s -> {
      if (s.isOpen()) {
        s.close();
      }
    });
  }

  private WindowStore<Bytes, byte[]> open() {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, "kept-offsets-test");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    MockProcessorContext<Object, Object> context = new MockProcessorContext<>(props, new TaskId(0, 0),
        stateDir.toFile());
    WindowStore<Bytes, byte[]> store = KeptOffsetsWindowStore.supplier(
        Stores.persistentWindowStore(NAME, Duration.ofDays(1), Duration.ofMinutes(1), false)).get();
    store.init(context.getStateStoreContext(), store);
    opened.add(store);
    return store;
  }

  private Path file() {
    return stateDir.resolve(KeptOffsetsWindowStore.FILE_PREFIX + NAME);
  }

  private static void write(WindowStore<Bytes, byte[]> store) {
    store.put(Bytes.wrap(new byte[] {1}), new byte[] {2}, 0);
  }

  @Test
  void aStoreNeverWrittenHasItsCommittedOffsetAfterACleanClose() {
    // Given a store without any segment, committed (Kafka Streams commits an empty changelog as -4) and closed
    WindowStore<Bytes, byte[]> first = open();
    first.commit(Map.of(CHANGELOG, -4L));
    assertThat(first.committedOffset(CHANGELOG)).isEqualTo(-4L);
    first.close();

    // Then the next start finds its offset, and a crash from there on would find none
    WindowStore<Bytes, byte[]> second = open();
    assertThat(second.committedOffset(CHANGELOG)).isEqualTo(-4L);
    assertThat(file()).doesNotExist();
  }

  @Test
  void aCrashLeavesNoOffsetSoTheTaskIsStillWiped() {
    WindowStore<Bytes, byte[]> first = open();
    first.commit(Map.of(CHANGELOG, 7L));
    first.close();
    WindowStore<Bytes, byte[]> second = open();
    second.commit(Map.of(CHANGELOG, 9L));
    // When the process dies here (no close), the next start has no offset: Kafka Streams wipes and restores
    opened.remove(second);
    WindowStore<Bytes, byte[]> third = open();
    assertThat(third.committedOffset(CHANGELOG)).isNull();
  }

  @Test
  void aStoreWrittenSinceItsLastCommitKeepsNothing() {
    // What it holds may not be committed (a dirty close): no offset, so it is restored
    WindowStore<Bytes, byte[]> first = open();
    first.commit(Map.of(CHANGELOG, 7L));
    write(first);
    first.close();
    assertThat(file()).doesNotExist();
    assertThat(open().committedOffset(CHANGELOG)).isNull();
  }

  @Test
  void aStoreCommittedWithoutOffsetsKeepsNothing() {
    // Kafka Streams commits a corrupted store with no offsets (KAFKA-17411)
    WindowStore<Bytes, byte[]> first = open();
    first.commit(Map.of(CHANGELOG, 7L));
    first.commit(Map.of());
    first.close();
    assertThat(open().committedOffset(CHANGELOG)).isNull();
  }

  @Test
  void aStoreWithSegmentsKeepsItsOffsetsInThemAsKafkaStreamsDoes() {
    WindowStore<Bytes, byte[]> first = open();
    write(first);
    first.commit(Map.of(CHANGELOG, 12L));
    first.close();
    assertThat(file()).doesNotExist();
    WindowStore<Bytes, byte[]> second = open();
    assertThat(second.committedOffset(CHANGELOG)).isEqualTo(12L);
    assertThat(second.fetch(Bytes.wrap(new byte[] {1}), 0)).containsExactly(2);
  }
}
