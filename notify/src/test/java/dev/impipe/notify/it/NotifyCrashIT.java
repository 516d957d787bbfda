package dev.impipe.notify.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.avro.Notification;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.notify.NotifyComponent;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.testkit.ChildPipeline;
import dev.impipe.testkit.Drain;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Decisions are exactly once: the notify app (its own JVM) is killed with SIGKILL while it is deciding a stream of
 * offline messages, and started again on the same state dir. Counted with a read_committed consumer of
 * im.notifications: every notificationId once, and per user the counts add up to the messages sent to them.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class NotifyCrashIT {

  private static final int USERS = 3_000;
  /** Users are written to in waves over this many seconds, so decisions fall due all along. */
  private static final int WAVES = 10;

  @TempDir
  Path work;

  @Test
  void aKilledDeciderNeitherLosesNorRepeatsADecision() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("notifycrash") + ".";
    HttpServer webhook = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    AtomicLong posts = new AtomicLong();
    webhook.createContext("/", exchange -> {
      exchange.getRequestBody().readAllBytes();
      posts.incrementAndGet();
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    webhook.start();
    Map<String, String> vars = new HashMap<>(Map.of("IM_TOPIC_PREFIX", prefix, "IM_CONVERSATION_PARTITIONS", "3",
        "IM_USER_PARTITIONS", "3", "IM_HTTP_PORT", "0", "KAFKA_SESSION_TIMEOUT_MS", "6000",
        "IM_STATE_DIR", work.resolve("state").toString(), "KAFKA_BOOTSTRAP_SERVERS", env.bootstrapServers(),
        "SCHEMA_REGISTRY_URL", env.schemaRegistryUrl(), "IM_NOTIFY_AFTER", "2s"));
    // A short coalescing window: a user's three messages are one burst unless the reading pauses between them for
    // the idle second after their due time (under load) or the kill falls between them; then the rest is one more
    // notification at the window's end, and the counts still add up. A long window would hold it that long.
    vars.putAll(Map.of("IM_NOTIFY_COALESCE", "2s", "IM_NOTIFY_WEBHOOK_URL",
        "http://127.0.0.1:" + webhook.getAddress().getPort() + "/hook", "IM_NOTIFY_WEBHOOK_SECRET", "it-secret"));
    ImConfig config = ImConfig.fromEnv(vars);
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    String app = prefix + NotifyComponent.NAME;

    // The apps' logs stay in target/it-logs (the temporary dir goes with the JVM): what a failure is read from.
    Path logs = Files.createDirectories(Path.of("target", "it-logs"));
    // The children log Kafka Streams' own lifecycle (restores, state changes, task corruption) too.
    Map<String, String> childVars = new HashMap<>(vars);
    childVars.put("JAVA_TOOL_OPTIONS", "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.streams=info");
    ChildPipeline child = ChildPipeline.start(NotifyComponent.class, childVars, logs.resolve(prefix + "notify-1.log"));
    Map<String, Integer> sent = new HashMap<>();
    try {
      // Given: every user has one registered device, known to the decider before any message
      try (KafkaProducer<String, PushRegistration> p = producer(config, topics.pushRegistrations().valueSerde()
          .serializer())) {
        for (int u = 0; u <= USERS; u++) {
          p.send(new ProducerRecord<>(names.pushRegistrations(), user(u), registration(user(u))));
        }
      }
      Drain.awaitCaughtUp(env.bootstrapServers(), app, List.of(names.pushRegistrations()), Duration.ofSeconds(60));

      // When: messages nobody receives reach them, written a second apart in waves (entry times spread over
      // WAVES seconds, so their decisions fall due all along; every 10th user gets a burst of three)
      long start = System.currentTimeMillis();
      try (KafkaProducer<String, InboxEntry> p = producer(config, topics.inbox().valueSerde().serializer())) {
        for (int wave = 0; wave < WAVES; wave++) {
          Instant at = Instant.ofEpochMilli(start + wave * 1_000L);
          for (int u = wave; u < USERS; u += WAVES) {
            int n = u % 10 == 0 ? 3 : 1;
            for (int i = 0; i < n; i++) {
              p.send(new ProducerRecord<>(names.inbox(), null, at.toEpochMilli(), user(u), message(user(u), i, at)));
            }
            sent.put(user(u), n);
          }
        }
      }
      Map<String, Integer> seen = new ConcurrentHashMap<>();
      Map<String, Integer> counts = new ConcurrentHashMap<>();
      try (KafkaConsumer<String, Notification> consumer = consumer(config, topics)) {
        consumer.subscribe(Set.of(names.notifications()));
        // ... and the app is killed with SIGKILL mid-stream
        await().atMost(Duration.ofSeconds(60)).until(() -> {
          poll(consumer, seen, counts);
          return seen.size() >= USERS / 4;
        });
        child.kill();
        poll(consumer, seen, counts);
        System.out.printf("%s killed after %d decisions%n", Instant.now(), seen.size());
        assertThat(seen).as("decided before the kill").hasSizeLessThan(USERS);
        // ... and started again on the same state dir
        child = ChildPipeline.start(NotifyComponent.class, childVars, logs.resolve(prefix + "notify-2.log"));
        // (the restarted child wipes its EOS state and restores it first; the wait allows for a loaded machine)
        Progress progress = new Progress(config, app, names);
        await().atMost(Duration.ofSeconds(240)).until(() -> {
          poll(consumer, seen, counts);
          long complete = sent.entrySet().stream().filter(e -> counts.getOrDefault(e.getKey(), 0) >= e.getValue())
              .count();
          progress.report(seen.size(), complete, () -> sent.entrySet().stream()
              .filter(e -> counts.getOrDefault(e.getKey(), 0) < e.getValue()).limit(5)
              .map(e -> e.getKey() + " " + counts.getOrDefault(e.getKey(), 0) + "/" + e.getValue()).toList());
          return complete == sent.size();
        });
        // Nothing more follows: a sentinel message, due after all of them, is decided once the rest was
        try (KafkaProducer<String, InboxEntry> p = producer(config, topics.inbox().valueSerde().serializer())) {
          p.send(new ProducerRecord<>(names.inbox(), user(USERS), message(user(USERS), 0, Instant.now())));
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> {
          poll(consumer, seen, counts);
          return counts.containsKey(user(USERS));
        });
      }
      // Then: no decision repeated, none lost, each message counted once
      assertThat(seen.values()).allMatch(c -> c == 1, "every notificationId once");
      for (Map.Entry<String, Integer> e : sent.entrySet()) {
        assertThat(counts.get(e.getKey())).as("messages counted for %s", e.getKey()).isEqualTo(e.getValue());
      }
      // More decisions than users (and the sentinel): bursts that a pause in reading split in two.
      System.out.printf("Decisions: %d for %d users and the sentinel (%d bursts split); webhook POSTs (at least "
          + "once): %d%n", seen.size(), USERS, seen.size() - USERS - 1, posts.get());
    } finally {
      child.close();
      webhook.stop(0);
    }
  }

  /**
   * Prints, every 10 s while the restarted app catches up, what a timeout is read from: the decisions seen, the users
   * complete, and the app's lag on its inputs (is it consuming at all?).
   */
  private static final class Progress {
    private final ImConfig config;
    private final String app;
    private final List<String> inputs;
    private final long start = System.nanoTime();
    private long next;

    Progress(ImConfig config, String app, TopicNames names) {
      this.config = config;
      this.app = app;
      this.inputs = List.of(names.inbox(), names.acks(), names.deviceCursors(), names.pushRegistrations());
    }

    void report(int decisions, long complete, Supplier<List<String>> incomplete) {
      long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
      if (seconds < next) {
        return;
      }
      next = seconds + 10;
      String lag;
      try (Admin admin = Admin.create(config.clientProperties())) {
        lag = Long.toString(Drain.lag(admin, app, inputs));
      } catch (Exception e) {
        lag = "unknown (" + e + ")";
      }
      System.out.printf("%s after restart +%d s: %d decisions, %d users complete, input lag %s; incomplete (counted/"
          + "sent): %s%n", Instant.now(), seconds, decisions, complete, lag, incomplete.get());
    }
  }

  private static String user(int u) {
    return "u" + u;
  }

  private static PushRegistration registration(String user) {
    return PushRegistration.newBuilder().setUserId(user).setDeviceId("phone").setRegistrationId("r-" + user)
        .setProvider(PushProvider.WEBHOOK).setRemoved(false).setAt(Instant.now()).build();
  }

  private static InboxEntry message(String user, int i, Instant at) {
    return InboxEntry.newBuilder().setUserId(user).setType(InboxEntryType.MESSAGE)
        .setConversationId(Ids.direct("sender", user)).setConversationSeq(i).setMessageId(user + "-m" + i)
        .setSenderId("sender").setBody("message " + i).setTimestamp(at).build();
  }

  private static void poll(KafkaConsumer<String, Notification> consumer, Map<String, Integer> seen,
      Map<String, Integer> counts) {
    for (ConsumerRecord<String, Notification> r : consumer.poll(Duration.ofMillis(200))) {
      seen.merge(r.value().getNotificationId(), 1, Integer::sum);
      counts.merge(r.value().getUserId(), r.value().getCount(), Integer::sum);
    }
  }

  private static <V> KafkaProducer<String, V> producer(ImConfig config,
      org.apache.kafka.common.serialization.Serializer<V> values) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    return new KafkaProducer<>(props, new StringSerializer(), values);
  }

  private static KafkaConsumer<String, Notification> consumer(ImConfig config, ImTopics topics) {
    Map<String, Object> props = new HashMap<>(config.clientProperties());
    props.put(ConsumerConfig.GROUP_ID_CONFIG, "notify-crash-it-" + System.nanoTime());
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    return new KafkaConsumer<>(props, new StringDeserializer(), topics.notifications().valueSerde().deserializer());
  }
}
