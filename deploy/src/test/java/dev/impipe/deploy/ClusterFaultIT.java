package dev.impipe.deploy;

import dev.impipe.cli.ClusterChild;
import dev.impipe.cli.Endpoints;
import dev.impipe.cli.LocalCluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.embedded.Dirs;
import dev.impipe.embedded.FreePorts;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import dev.impipe.testkit.TestTmpDir;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Faults on {@code bin/im local --brokers 3 --instances 2} (LocalCluster: every broker and instance a JVM of its
 * own) while traffic runs: a SIGKILLed broker (the one leading most {@code im.inbox} partitions), a SIGKILLed
 * instance, then a rolling SIGTERM restart of every instance. A {@code read_committed} checker reads
 * {@code im.inbox} all along: every message reaches its recipient exactly once and in order, and every sync answer
 * given meanwhile is right (a 503 with {@code Retry-After} is allowed, wrong data never).
 *
 * <p>Modest scale by default so the build stays fast; bigger: {@code -Dim.fault.messages=2000 -Dim.fault.senders=8}
 * (messages per sender per fault).
 *
 * <p>It lives in {@code deploy} (running it for real), driving {@code LocalCluster} through its public API: a leaf
 * module, so the build runs it beside {@code bench} instead of before it (docs/development/tests.md, "Build time").
 */
@Timeout(value = 40, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterFaultIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int MESSAGES = Integer.getInteger("im.fault.messages", 45);
  private static final int SENDERS = Integer.getInteger("im.fault.senders", 3);
  /**
   * The instances' ACK timeout (IM_ACK_TIMEOUT, 15 s by default) and how far out the delay burst is due: the broker
   * restart test waits for both, so they are as short as keeps its order of events (timers expire and the burst is
   * due while the broker is down) with seconds to spare on a loaded runner.
   */
  private static final int ACK_TIMEOUT_S = 8;
  private static final int BURST_DUE_S = 20;
  private static final String CHILD_JVM_FLAGS = System.getProperty("im.fault.jvm-flags",
      "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
  private final ByteArrayOutputStream clusterLog = new ByteArrayOutputStream();
  private Path dir;
  private LocalCluster cluster;
  private Checker checker;

  @BeforeAll
  void startCluster() throws Exception {
    dir = TestTmpDir.newDir("im-cluster-it-");
    Map<String, String> env = TestTokens.env(Map.of(
        // instance i listens on IM_HTTP_PORT + i - 1: both ports must be free (the one after a port the system
        // picked was once taken, and instance 2 could not start)
        "IM_HTTP_PORT", Integer.toString(FreePorts.preferredRun(0, 2)),
        "IM_CONVERSATION_PARTITIONS", "6", "IM_USER_PARTITIONS", "6",
        // C1 only and the serial collector (docs/operations/faults.md): the test is CPU-bound (five JVMs on two
        // cores, every restart a cold JVM), so they skip C2's compilations, as PIT's minions do.
        "IM_INSTANCE_JAVA_OPTS", "-Xms64m -Xmx512m " + CHILD_JVM_FLAGS,
        "IM_BROKER_JAVA_OPTS", "-Xms64m -Xmx384m " + CHILD_JVM_FLAGS,
        // A killed instance's tasks move after the group's session timeout: 10 s instead of the default 45 s keeps
        // the test short (the brokers' group.min.session.timeout.ms is 6 s); docs/operations/faults.md.
        "KAFKA_SESSION_TIMEOUT_MS", "10000",
        "IM_ACK_TIMEOUT", ACK_TIMEOUT_S + "s",
        Endpoints.IM_LOCAL_ENDPOINTS_FILE, dir.resolve("endpoints.properties").toString()));
    cluster = LocalCluster.start(env, Optional.empty(), 3, 2, new PrintStream(clusterLog, true,
        StandardCharsets.UTF_8), false);
    checker = new Checker(cluster);
    checker.start();
  }

  @AfterAll
  void stopCluster() {
    if (checker != null) {
      checker.close();
    }
    if (cluster != null) {
      // Nothing is checked after the last test and the data is thrown away: kill rather than stop. An orderly stop
      // of three KRaft brokers one by one waits out the last one's controlled shutdown, which has no quorum left.
      for (ClusterChild c : cluster.instances()) {
        killQuietly(c);
      }
      for (ClusterChild c : cluster.brokers()) {
        killQuietly(c);
      }
      printWarnings();
      cluster.close();
    }
    System.out.println(clusterLog.toString(StandardCharsets.UTF_8));
    Dirs.deleteRecursively(dir);
  }

  /** The instances' errors and the project's own warnings (their logs go with the cluster), 40 lines per log. */
  private void printWarnings() {
    for (ClusterChild c : cluster.instances()) {
      try (var lines = Files.lines(c.log(), StandardCharsets.UTF_8)) {
        lines.filter(l -> l.contains(" ERROR ") || l.contains(" WARN dev.impipe")).limit(40)
            .forEach(l -> System.out.println("[instance " + c.number() + "] " + l));
      } catch (java.io.IOException | java.io.UncheckedIOException e) {
        System.out.println("could not read " + c.log() + ": " + e);
      }
    }
  }

  private static void killQuietly(ClusterChild c) {
    try {
      c.kill();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  @Order(1)
  void killingTheBrokerThatLeadsMostInboxPartitionsLosesNothing() throws Exception {
    ClusterChild victim = brokerLeadingMostPartitionsOf("im.inbox");
    Outcome outcome = underTraffic("broker", () -> {
      victim.kill();
      return victim;
    });
    outcome.assertExactlyOnceInOrderAndSyncNeverWrong();
    System.out.printf("FAULT broker %d SIGKILL: %s%n", victim.number(), outcome.summary());
  }

  @Test
  @Order(2)
  void killingOneOfTwoInstancesLosesNothingAndTheOtherKeepsServing() throws Exception {
    ClusterChild victim = cluster.instances().get(1);
    Outcome outcome = underTraffic("instance", () -> {
      outOfRotation.add(victim.number());
      victim.kill();
      return victim;
    });
    outcome.assertExactlyOnceInOrderAndSyncNeverWrong();
    System.out.printf("FAULT instance %d SIGKILL: %s%n", victim.number(), outcome.summary());
  }

  @Test
  @Order(3)
  void rollingSigtermRestartOfEveryInstanceLosesNothing() throws Exception {
    String tag = "roll" + System.nanoTime();
    Traffic traffic = new Traffic(tag);
    SyncProbe probe = new SyncProbe(tag);
    traffic.start();
    probe.start();
    long t0 = System.nanoTime();
    int n = cluster.instances().size();
    for (ClusterChild instance : cluster.instances()) {
      // the i-th stop once i/(n+1) of the traffic is out (a slow restart may let the traffic finish first)
      awaitSent(traffic, instance.number() * SENDERS * MESSAGES / (n + 1));
      outOfRotation.add(instance.number());
      instance.stop(Duration.ofSeconds(60));
      restartInstance(instance);
    }
    Outcome outcome = finish(tag, traffic, probe, t0);
    outcome.assertExactlyOnceInOrderAndSyncNeverWrong();
    System.out.printf("FAULT rolling SIGTERM restart: %s%n", outcome.summary());
  }

  @Test
  @Order(4)
  void aBrokerRestartDuringADelayBurstAndAckTimerExpiryLosesAndRepeatsNothingAndFiresNothingEarly()
      throws Exception {
    String tag = "delay" + System.nanoTime();
    ClusterChild victim = brokerLeadingMostPartitionsOf("im.delayed");
    // A burst of scheduled messages all due at one instant BURST_DUE_S out, and pushes nobody ACKs whose ACK timers
    // (IM_ACK_TIMEOUT = ACK_TIMEOUT_S) expire while the broker leading most im.delayed partitions is down: it dies
    // 1 s before the timers' deadline and comes back 3 s after both the timers and the burst are due.
    int burst = Math.max(1, MESSAGES / 3);
    long t0 = System.nanoTime();
    long dueNanos = t0 + TimeUnit.SECONDS.toNanos(BURST_DUE_S);
    // read after t0: never earlier than dueNanos
    java.time.Instant dueAt = java.time.Instant.now().plusSeconds(BURST_DUE_S);
    AtomicInteger retries = new AtomicInteger();
    List<Thread> schedulers = new ArrayList<>();
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    for (int s = 0; s < SENDERS; s++) {
      int sender = s;
      Thread t = new Thread(() -> {
        try {
          for (int n = 0; n < burst; n++) {
            postUntilAccepted(sender(tag, sender), "{\"to\":\"" + recipient(tag, sender) + "\",\"body\":\"" + tag
                + ":" + n + "\",\"clientMsgId\":\"" + tag + "-" + n + "\",\"deliverAt\":\"" + dueAt + "\"}", n,
                retries);
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      }, "schedule-" + s);
      t.start();
      schedulers.add(t);
    }
    for (Thread t : schedulers) {
      t.join(TimeUnit.SECONDS.toMillis(60));
    }
    assertThat(failures).as("scheduling the burst").isEmpty();
    long pushedNanos = System.nanoTime();
    java.time.Instant pushedAt = java.time.Instant.now();
    try (AckTimers timers = new AckTimers(tag)) {
      timers.pushUnacked(pushedAt);
      long ackTimeoutNanos = TimeUnit.SECONDS.toNanos(ACK_TIMEOUT_S);
      long killAt = pushedNanos + ackTimeoutNanos - TimeUnit.SECONDS.toNanos(1);
      long restartAt = Math.max(dueNanos, pushedNanos + ackTimeoutNanos) + TimeUnit.SECONDS.toNanos(3);
      assertThat(killAt).as("set up before the burst is due").isLessThan(dueNanos - TimeUnit.SECONDS.toNanos(1));
      await().atMost(Duration.ofSeconds(30)).until(() -> System.nanoTime() >= killAt);
      assertThat(checker.count(tag)).as("delivered before they were due").isZero();
      victim.kill();
      await().atMost(Duration.ofSeconds(60)).until(() -> System.nanoTime() >= restartAt);
      victim.restart();
      await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
          .until(() -> checker.count(tag) >= SENDERS * burst && timers.seqs().size() >= AckTimers.PUSHES);

      for (int s = 0; s < SENDERS; s++) {
        // every scheduled message exactly once (their order among equal due times is not defined)
        assertThat(checker.numbers(recipient(tag, s), tag)).as("inbox of %s", recipient(tag, s))
            .containsExactlyInAnyOrderElementsOf(java.util.stream.IntStream.range(0, burst).boxed().toList());
      }
      assertThat(checker.firstSeenOf(tag)).as("first sighting of a scheduled message vs its due time")
          .isGreaterThanOrEqualTo(dueNanos);
      assertThat(checker.earliestRecordTimeOf(tag)).as("earliest im.inbox record time of a scheduled message")
          .isGreaterThanOrEqualTo(dueAt.toEpochMilli());
      // every unACKed push timed out exactly once (max attempts 1: the final timeout), none before its deadline
      assertThat(timers.seqs()).as("seqs of the AckTimeouts")
          .containsExactlyInAnyOrderElementsOf(java.util.stream.LongStream.range(0, AckTimers.PUSHES).boxed()
              .toList());
      assertThat(timers.firstSeenNanos()).as("first AckTimeout sighting vs the pushes + the ACK timeout")
          .isGreaterThanOrEqualTo(pushedNanos + ackTimeoutNanos);
      assertThat(timers.earliestDeadline()).as("earliest AckTimeout deadline")
          .isGreaterThanOrEqualTo(pushedAt.plusSeconds(ACK_TIMEOUT_S).toEpochMilli());
      System.out.printf("FAULT broker %d SIGKILL during a delay burst and ACK-timer expiry: %d scheduled messages "
          + "(%d send retries, last delivered %d ms after the due time), %d ACK timeouts (last seen %d ms after "
          + "its deadline)%n", victim.number(), SENDERS * burst, retries.get(),
          (checker.lastSeenOf(tag) - dueNanos) / 1_000_000, AckTimers.PUSHES,
          (timers.lastSeenNanos() - pushedNanos - ackTimeoutNanos) / 1_000_000);
    }
  }

  /**
   * Pushes nobody ACKs, written to im.deliveries as a push gateway would, and a read_committed reader of the
   * AckTimeouts the wheel emits for them.
   */
  private final class AckTimers implements AutoCloseable {
    static final int PUSHES = 60;
    private final String user;
    private final ImTopics topics;
    private final KafkaConsumer<String, dev.impipe.avro.AckTimeout> consumer;
    private final List<Long> seqs = new CopyOnWriteArrayList<>();
    private final AtomicLong firstSeen = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong lastSeen = new AtomicLong();
    private final AtomicLong earliestDeadline = new AtomicLong(Long.MAX_VALUE);
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread reader;

    AckTimers(String tag) {
      user = "acker" + tag;
      topics = new ImTopics(TopicNames.withPrefix("im."), SchemaRegistryClients.create(cluster.schemaRegistryUrl()));
      Map<String, Object> props = new HashMap<>();
      props.put("bootstrap.servers", cluster.bootstrapServers());
      props.put("isolation.level", "read_committed");
      props.put("enable.auto.commit", "false");
      consumer = new KafkaConsumer<>(props, new StringDeserializer(),
          topics.ackTimeouts().valueSerde().deserializer());
      List<TopicPartition> partitions = consumer.partitionsFor("im.ack-timeouts").stream()
          .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      reader = new Thread(() -> {
        while (running.get()) {
          for (ConsumerRecord<String, dev.impipe.avro.AckTimeout> r : consumer.poll(Duration.ofMillis(200))) {
            if (r.value() != null && user.equals(r.value().getUserId())) {
              long now = System.nanoTime();
              firstSeen.accumulateAndGet(now, Math::min);
              lastSeen.accumulateAndGet(now, Math::max);
              earliestDeadline.accumulateAndGet(r.value().getDeadline().toEpochMilli(), Math::min);
              seqs.addAll(r.value().getSeqs());
            }
          }
        }
        consumer.close();
      }, "ack-timeout-reader");
      reader.start();
    }

    void pushUnacked(java.time.Instant pushedAt) throws Exception {
      Map<String, Object> props = new HashMap<>();
      props.put("bootstrap.servers", cluster.bootstrapServers());
      props.put("enable.idempotence", "true");
      try (org.apache.kafka.clients.producer.KafkaProducer<String, dev.impipe.avro.Delivery> producer =
          new org.apache.kafka.clients.producer.KafkaProducer<>(props,
              new org.apache.kafka.common.serialization.StringSerializer(),
              topics.deliveries().valueSerde().serializer())) {
        List<java.util.concurrent.Future<?>> sends = new ArrayList<>();
        for (long seq = 0; seq < PUSHES; seq++) {
          sends.add(producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("im.deliveries", null,
              pushedAt.toEpochMilli(), user, dev.impipe.avro.Delivery.newBuilder().setUserId(user)
                  .setDeviceId("phone").setSeq(seq).setPushedAt(pushedAt).setAttempt(1).build())));
        }
        for (java.util.concurrent.Future<?> send : sends) {
          send.get(30, TimeUnit.SECONDS);
        }
      }
    }

    List<Long> seqs() {
      return seqs;
    }

    long firstSeenNanos() {
      return firstSeen.get();
    }

    long lastSeenNanos() {
      return lastSeen.get();
    }

    long earliestDeadline() {
      return earliestDeadline.get();
    }

    @Override
    public void close() throws InterruptedException {
      running.set(false);
      reader.join(10_000);
    }
  }

  // ------------------------------------------------------------------------------------------------------------

  /** Sends, injects the fault a third of the way in, restarts the victim two thirds in, and checks. */
  private Outcome underTraffic(String what, FaultAction fault) throws Exception {
    String tag = what + System.nanoTime();
    Traffic traffic = new Traffic(tag);
    SyncProbe probe = new SyncProbe(tag);
    traffic.start();
    probe.start();
    awaitSent(traffic, SENDERS * MESSAGES / 3);
    long t0 = System.nanoTime();
    ClusterChild victim = fault.inject();
    probe.faultAt(t0);
    awaitSent(traffic, 2 * SENDERS * MESSAGES / 3);
    if (victim.role() == ClusterChild.Role.INSTANCE) {
      restartInstance(victim);
    } else {
      victim.restart();
    }
    return finish(tag, traffic, probe, t0);
  }

  private Outcome finish(String tag, Traffic traffic, SyncProbe probe, long faultAt) throws Exception {
    traffic.join(Duration.ofMinutes(5));
    await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
        .until(() -> checker.count(tag) >= SENDERS * MESSAGES);
    probe.stop();
    return new Outcome(tag, traffic, probe, faultAt);
  }

  private void awaitSent(Traffic traffic, int n) {
    await().atMost(Duration.ofMinutes(4)).pollInterval(Duration.ofMillis(50)).until(() -> {
      traffic.rethrow();
      return traffic.sent() >= n;
    });
  }

  private ClusterChild brokerLeadingMostPartitionsOf(String topic) throws Exception {
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", cluster.bootstrapServers()))) {
      Map<Integer, Integer> leaders = new HashMap<>();
      admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic)
          .partitions().forEach(p -> leaders.merge(p.leader().id(), 1, Integer::sum));
      int node = Collections.max(leaders.entrySet(), Map.Entry.comparingByValue()).getKey();
      return cluster.brokers().get(node - 1);
    }
  }

  @FunctionalInterface
  private interface FaultAction {
    ClusterChild inject() throws Exception;
  }

  /**
   * The instances a load balancer would send to: not killed or stopping, and not restarting (an instance is in
   * rotation again once its {@code /health} is 200, as a readiness probe would have it).
   */
  private List<String> liveUrls() {
    return cluster.instances().stream().filter(c -> c.alive() && !outOfRotation.contains(c.number()))
        .map(c -> cluster.httpUrl(c.number())).toList();
  }

  private final java.util.Set<Integer> outOfRotation = ConcurrentHashMap.newKeySet();

  private void restartInstance(ClusterChild instance) throws Exception {
    instance.restart();
    outOfRotation.remove(instance.number());
  }

  private static String sender(String tag, int i) {
    return "s" + i + tag;
  }

  private static String recipient(String tag, int i) {
    return "r" + i + tag;
  }

  /**
   * Posts a message through the live instances until one accepts it (202): 5xx or no answer means the same
   * clientMsgId again, maybe via another instance (the fan-out delivers it once). Returns how long it was refused.
   */
  private long postUntilAccepted(String sender, String body, int n, AtomicInteger retries) throws Exception {
    long firstFailure = 0;
    for (int attempt = 0;; attempt++) {
      List<String> urls = liveUrls();
      String url = urls.get((n + attempt) % urls.size());
      int status;
      try {
        status = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/messages"))
            .timeout(Duration.ofSeconds(20))
            .header("Authorization", TestTokens.bearer(sender))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.discarding())
            .statusCode();
      } catch (java.io.IOException e) {
        status = -1;
      }
      if (status == 202) {
        return firstFailure == 0 ? 0 : System.nanoTime() - firstFailure;
      }
      if (status >= 400 && status < 500) {
        throw new AssertionError("send " + body + " refused with " + status);
      }
      firstFailure = firstFailure == 0 ? System.nanoTime() : firstFailure;
      retries.incrementAndGet();
      if (attempt > 600) {
        throw new AssertionError("send " + body + " not accepted after " + attempt + " attempts");
      }
      Thread.sleep(100); // back-off between retries of a failed send
    }
  }

  /** One thread per sender: direct messages 0..MESSAGES-1 to its recipient, each retried until accepted. */
  private final class Traffic {
    private final String tag;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicInteger sent = new AtomicInteger();
    private final AtomicInteger retries = new AtomicInteger();
    private final AtomicLong longestOutageNanos = new AtomicLong();
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();

    Traffic(String tag) {
      this.tag = tag;
    }

    void start() {
      for (int i = 0; i < SENDERS; i++) {
        int s = i;
        Thread t = new Thread(() -> {
          try {
            for (int n = 0; n < MESSAGES; n++) {
              send(s, n);
              sent.incrementAndGet();
            }
          } catch (Throwable e) {
            errors.add(e);
          }
        }, "traffic-" + i);
        t.start();
        threads.add(t);
      }
    }

    private void send(int s, int n) throws Exception {
      String body = "{\"to\":\"" + recipient(tag, s) + "\",\"body\":\"" + tag + ":" + n
          + "\",\"clientMsgId\":\"" + tag + "-" + n + "\"}";
      long outage = postUntilAccepted(sender(tag, s), body, n, retries);
      longestOutageNanos.accumulateAndGet(outage, Math::max);
    }

    int sent() {
      return sent.get();
    }

    void rethrow() {
      if (!errors.isEmpty()) {
        throw new AssertionError("traffic failed", errors.get(0));
      }
    }

    void join(Duration timeout) throws InterruptedException {
      for (Thread t : threads) {
        t.join(timeout.toMillis());
      }
      rethrow();
    }
  }

  /** Syncs every recipient's inbox round after round through the live instances; keeps every answer. */
  private final class SyncProbe {
    private final String tag;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<JsonNode> answers = new CopyOnWriteArrayList<>();
    private final List<String> wrong = new CopyOnWriteArrayList<>();
    private final AtomicInteger unavailable = new AtomicInteger();
    private final AtomicLong faultAt = new AtomicLong();
    private final AtomicLong lastUnavailableAfterFault = new AtomicLong();
    private Thread thread;

    SyncProbe(String tag) {
      this.tag = tag;
    }

    void faultAt(long nanos) {
      faultAt.set(nanos);
    }

    void start() {
      thread = new Thread(() -> {
        int round = 0;
        while (running.get()) {
          for (int s = 0; s < SENDERS && running.get(); s++) {
            probe(recipient(tag, s), round++);
          }
        }
      }, "sync-probe");
      thread.start();
    }

    private void probe(String user, int round) {
      List<String> urls = liveUrls();
      String url = urls.get(round % urls.size()) + "/v1/users/" + user + "/inbox?limit=1000";
      try {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
            .header("Authorization", TestTokens.bearer(user)).GET().build(), HttpResponse.BodyHandlers.ofString());
        JsonNode page = r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
        if (page != null && page.hasNonNull("userId") && page.has("entries")) {
          answers.add(page);
        } else if (r.statusCode() == 503 && r.headers().firstValue("Retry-After").isPresent()) {
          noteUnavailable();
        } else {
          wrong.add(url + " -> " + r.statusCode() + " " + r.body() + " (headers " + r.headers().map() + ", "
              + r.version() + ")");
        }
      } catch (java.io.IOException e) {
        noteUnavailable(); // the instance died under the request: a client sees a dropped connection and retries
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        running.set(false);
      }
    }

    private void noteUnavailable() {
      unavailable.incrementAndGet();
      if (faultAt.get() != 0) {
        lastUnavailableAfterFault.set(System.nanoTime() - faultAt.get());
      }
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(30_000);
    }
  }

  /** What the checker saw for one fault, and what the probes and senders recorded. */
  private final class Outcome {
    private final String tag;
    private final Traffic traffic;
    private final SyncProbe probe;
    private final long faultAt;

    Outcome(String tag, Traffic traffic, SyncProbe probe, long faultAt) {
      this.tag = tag;
      this.traffic = traffic;
      this.probe = probe;
      this.faultAt = faultAt;
    }

    void assertExactlyOnceInOrderAndSyncNeverWrong() {
      for (int s = 0; s < SENDERS; s++) {
        List<Integer> seen = checker.numbers(recipient(tag, s), tag);
        // every message exactly once (no loss, no duplicate) and in conversation order
        assertThat(seen).as("inbox of %s", recipient(tag, s))
            .containsExactlyElementsOf(java.util.stream.IntStream.range(0, MESSAGES).boxed().toList());
      }
      assertThat(probe.wrong).as("sync answers other than 200 or 503+Retry-After").isEmpty();
      int checked = 0;
      for (JsonNode answer : probe.answers) {
        String user = answer.get("userId").asText();
        List<Integer> numbers = new ArrayList<>();
        for (JsonNode e : answer.get("entries")) {
          String body = e.path("body").asText("");
          if (!body.startsWith(tag + ":")) {
            continue;
          }
          // the entry at this seq is exactly the one the inbox topic holds at that offset
          assertThat(checker.bodyAt(user, e.get("seq").asLong())).as("%s seq %s", user, e.get("seq"))
              .isEqualTo(body);
          numbers.add(Integer.parseInt(body.substring(tag.length() + 1)));
          checked++;
        }
        // a prefix of the conversation: no holes, no repeats
        assertThat(numbers).as("sync of %s", user)
            .containsExactlyElementsOf(java.util.stream.IntStream.range(0, numbers.size()).boxed().toList());
      }
      assertThat(checked).as("sync answers with entries").isPositive();
    }

    String summary() {
      return String.format(java.util.Locale.ROOT, "%d messages, %d send retries, longest send outage %d ms, "
          + "%d sync answers (%d unavailable, last %d ms after the fault), longest delivery delay after the fault "
          + "%d ms", SENDERS * MESSAGES, traffic.retries.get(), traffic.longestOutageNanos.get() / 1_000_000,
          probe.answers.size(), probe.unavailable.get(), probe.lastUnavailableAfterFault.get() / 1_000_000,
          checker.longestDelayAfter(tag, faultAt) / 1_000_000);
    }
  }

  /** A read_committed consumer of im.inbox over the whole run: each recipient's entries with their offsets. */
  private static final class Checker implements AutoCloseable {
    private final KafkaConsumer<String, InboxEntry> consumer;
    private final Map<String, Map<Long, String>> byUser = new ConcurrentHashMap<>();
    private final Map<String, Long> firstSeenNanos = new ConcurrentHashMap<>();
    private final Map<String, Long> recordTimes = new ConcurrentHashMap<>();
    private final Map<String, List<String>> ordered = new ConcurrentHashMap<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;

    Checker(LocalCluster cluster) {
      ImTopics topics = new ImTopics(TopicNames.withPrefix("im."),
          SchemaRegistryClients.create(cluster.schemaRegistryUrl()));
      Map<String, Object> props = new HashMap<>();
      props.put("bootstrap.servers", cluster.bootstrapServers());
      props.put("isolation.level", "read_committed");
      props.put("enable.auto.commit", "false");
      consumer = new KafkaConsumer<>(props, new StringDeserializer(),
          topics.valueSerde(InboxEntry.class).deserializer());
      List<TopicPartition> partitions = consumer.partitionsFor("im.inbox").stream()
          .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      thread = new Thread(this::run, "inbox-checker");
    }

    void start() {
      thread.start();
    }

    private void run() {
      while (running.get()) {
        for (ConsumerRecord<String, InboxEntry> r : consumer.poll(Duration.ofMillis(200))) {
          InboxEntry e = r.value();
          if (e == null || e.getType() != InboxEntryType.MESSAGE || e.getBody() == null) {
            continue;
          }
          byUser.computeIfAbsent(r.key(), k -> new ConcurrentHashMap<>()).put(r.offset(), e.getBody());
          ordered.computeIfAbsent(r.key(), k -> new CopyOnWriteArrayList<>()).add(e.getBody());
          firstSeenNanos.putIfAbsent(r.key() + "|" + e.getBody(), System.nanoTime());
          recordTimes.merge(r.key() + "|" + e.getBody(), r.timestamp(), Math::min);
        }
      }
      consumer.close();
    }

    /** Entries of {@code tag} seen so far in the recipients' inboxes (duplicates included). */
    int count(String tag) {
      int n = 0;
      for (int s = 0; s < SENDERS; s++) {
        n += numbers(recipient(tag, s), tag).size();
      }
      return n;
    }

    /** The message numbers of {@code tag} in {@code user}'s inbox, in inbox order. */
    List<Integer> numbers(String user, String tag) {
      return ordered.getOrDefault(user, List.of()).stream().filter(b -> b.startsWith(tag + ":"))
          .map(b -> Integer.parseInt(b.substring(tag.length() + 1))).toList();
    }

    String bodyAt(String user, long offset) {
      return byUser.getOrDefault(user, Map.of()).get(offset);
    }

    /** When the first entry of {@code tag} was first seen (System.nanoTime), or Long.MAX_VALUE if none was. */
    long firstSeenOf(String tag) {
      return sightings(tag).min().orElse(Long.MAX_VALUE);
    }

    /** When the last entry of {@code tag} was first seen (System.nanoTime), or 0 if none was. */
    long lastSeenOf(String tag) {
      return sightings(tag).max().orElse(0);
    }

    /** The earliest record timestamp (epoch ms) of an im.inbox entry of {@code tag}. */
    long earliestRecordTimeOf(String tag) {
      return recordTimes.entrySet().stream().filter(e -> e.getKey().contains("|" + tag + ":"))
          .mapToLong(Map.Entry::getValue).min().orElse(Long.MAX_VALUE);
    }

    private java.util.stream.LongStream sightings(String tag) {
      return firstSeenNanos.entrySet().stream().filter(e -> e.getKey().contains("|" + tag + ":"))
          .mapToLong(Map.Entry::getValue);
    }

    /** Longest wait, among entries of {@code tag} first seen after {@code since}, between two first sightings. */
    long longestDelayAfter(String tag, long since) {
      List<Long> times = firstSeenNanos.entrySet().stream().filter(e -> e.getKey().contains("|" + tag + ":"))
          .map(Map.Entry::getValue).filter(t -> t >= since).sorted().toList();
      long longest = times.isEmpty() ? 0 : times.get(0) - since;
      for (int i = 1; i < times.size(); i++) {
        longest = Math.max(longest, times.get(i) - times.get(i - 1));
      }
      return longest;
    }

    @Override
    public void close() {
      running.set(false);
      try {
        thread.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
