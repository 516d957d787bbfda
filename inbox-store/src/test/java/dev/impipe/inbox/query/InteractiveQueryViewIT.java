package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.testkit.TestTmpDir;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.testkit.StreamsTestConfig;
import dev.impipe.runtime.topics.TopicNames;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reads of a store while its processor writes it, on the real broker: with Kafka Streams 4.3.1's IQv2 key and range
 * queries this deadlocked the stream thread and the reader within seconds (position lock, then store lock, against
 * put's store lock, then position lock); every read and the processing must go on to the end.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class InteractiveQueryViewIT {

  private static final int RECORDS = 20_000;
  private static final int KEYS = 50;

  @Test
  void readersAndTheProcessorNeverBlockEachOther() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String app = ItEnvironment.unique("iqv");
    String topic = app + ".in";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }
    Topology topology = new Topology();
    topology.addSource("in", Serdes.String().deserializer(), Serdes.String().deserializer(), topic);
    topology.addProcessor("put", () -> new Processor<String, String, Void, Void>() {
      private KeyValueStore<Bytes, Long> store;

      @Override
      public void init(ProcessorContext<Void, Void> context) {
        store = context.getStateStore("s");
      }

      @Override
      public void process(Record<String, String> record) {
        store.put(Bytes.wrap(record.key().getBytes()), Long.parseLong(record.value()));
      }
    }, "in");
    topology.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore("s"), Serdes.Bytes(),
        Serdes.Long()).withCachingDisabled(), "put");

    Path state = TestTmpDir.newDir("iqv-it-");
    Properties props = StreamsTestConfig.forBroker(env.bootstrapServers(), TopicNames.withPrefix(app + "."), app,
        state);
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 50);
    // Daemon readers and a bounded close: a deadlocked run must fail, not hang the build.
    ExecutorService readers = Executors.newFixedThreadPool(2, task -> {
      Thread t = new Thread(task, "iqv-reader");
      t.setDaemon(true);
      return t;
    });
    KafkaStreams streams = new KafkaStreams(topology, props);
    try {
      streams.start();
      await().atMost(Duration.ofSeconds(60)).until(() -> streams.state() == KafkaStreams.State.RUNNING);

      AtomicBoolean done = new AtomicBoolean();
      AtomicLong reads = new AtomicLong();
      List<Future<?>> running = new ArrayList<>();
      for (int r = 0; r < 2; r++) {
        boolean ranges = r == 1;
        running.add(readers.submit(() -> {
          while (!done.get()) {
            try {
              StoreView<Long> view = InteractiveQueryView.atLeast(streams, "s", 0, topic, 0);
              if (ranges) {
                view.range(Bytes.wrap("k".getBytes()), Bytes.wrap("l".getBytes()), reads.get() % 2 == 0, 10);
              } else {
                view.get(Bytes.wrap(("k" + reads.get() % KEYS).getBytes()));
              }
              reads.incrementAndGet();
            } catch (NotServableException e) {
              // nothing applied yet, or a rebalance: read again
            }
          }
          return null;
        }));
      }
      try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
          env.bootstrapServers(), "linger.ms", 5), new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < RECORDS; i++) {
          producer.send(new ProducerRecord<>(topic, "k" + i % KEYS, Integer.toString(i)));
        }
      }

      // Then the processor applies every record while the readers go on, and the last value is readable
      await().atMost(Duration.ofSeconds(90)).ignoreExceptionsInstanceOf(NotServableException.class)
          .until(() -> InteractiveQueryView.<Long>atLeast(streams, "s", 0, topic, RECORDS - 1)
              .get(Bytes.wrap(("k" + (RECORDS - 1) % KEYS).getBytes())).orElse(-1L) == RECORDS - 1);
      done.set(true);
      for (Future<?> f : running) {
        f.get(30, TimeUnit.SECONDS); // a reader stuck in a lock never returns
      }
      assertThat(reads.get()).as("reads that overlapped the processing").isGreaterThan(100);
    } finally {
      readers.shutdownNow();
      streams.close(Duration.ofSeconds(30));
      dev.impipe.embedded.Dirs.deleteRecursively(state);
    }
  }
}
