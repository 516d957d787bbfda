package dev.impipe.cli.grow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.avro.ChatMessage;
import dev.impipe.avro.ConversationType;
import dev.impipe.avro.DeviceCursor;
import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.MessageType;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.inbox.PrevPosition;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.push.PushGatewayComponent;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import dev.impipe.testkit.ItEnvironment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/im inbox grow --online} while the real fan-out keeps fanning out a steady stream of direct messages
 * between 50 users and each user's phone syncs over HTTP in a loop the whole time, committing its cursor after each
 * page ({@code PUT .../cursor}), as a client does. The grow (a child JVM) is SIGKILLed during its copy and run
 * again; the fan-out fences generation 0, holds its entries while the copy passes the fences, and writes them to
 * generation 1 once it is live. Then generation 1's inbox store is started next to generation 0's
 * ({@code IM_INBOX_GENERATION=1}); five phones move to it at once, the others, still syncing generation 0, once
 * those have resynced, all while generation 0's inbox store still serves: no phone waits. Only then is generation 0's inbox store stopped and the grow run again (it translates the cursors
 * committed to generation 0 since). A moving phone's next sync with its generation-0 cursor is answered 409 and it
 * resyncs from the cursor in the answer: the cursor it sent, translated through generation 1's copy index (503
 * while generation 1's store has not applied the copy up to it: retried). Per user, generation 1's log is
 * generation 0's entries in order, each once, followed by the new ones (none lost, none twice, each conversation's
 * order kept); per phone, the message ids it received are exactly its user's log, in order, none missing, none
 * twice, across the switch, though it moved before the rerun; a cursor committed before the grow resumes exactly
 * after what the device had seen. u0's phone, offline during the grow's second run and back after {@code LIVE},
 * syncs on generation 0 past its translated committed cursor, then moves: it receives nothing again either.
 *
 * <p>Ten users also have a WebSocket device on generation 0's push gateway that stores and ACKs what it receives.
 * They are offline during the grow's second run, come back to generation 0's gateway after {@code LIVE} and ACK the
 * rest of generation 0 there (past the cursors the grow translated), then, before the rerun, connect to generation
 * 1's gateway with their own last cursor ({@code ?cursor=}): the gateway's first sync is answered 409 with that
 * cursor translated, and each device receives exactly its user's log, in order, none missing, none twice, where a
 * resume from the committed cursor would have brought the rest of generation 0 again.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class OnlineInboxGrowIT {

  private static final int USERS = 50;
  /** Phones u0..u4 move to generation 1 as soon as it serves; the others a little later; all before the rerun. */
  private static final int EARLY = 5;
  /** Users u40..u49 also have a WebSocket device. */
  private static final List<String> WS_USERS = java.util.stream.IntStream.range(40, 50).mapToObj(u -> "u" + u)
      .toList();

  @TempDir
  Path tmp;

  /** One entry of a user's inbox log: its message, and whether the grow copied it (an im.prev-seq header). */
  private record Entry(long offset, String messageId, String conversationId, boolean copied) {}

  @Test
  void growsFourToEightPartitionsWhileTheDevicesSync() throws Exception {
    ItEnvironment.Endpoints it = ItEnvironment.get();
    String prefix = ItEnvironment.unique("onlinegrow") + ".";
    Map<String, String> env = new HashMap<>(TestTokens.env());
    env.putAll(Map.of(ImConfig.IM_TOPIC_PREFIX, prefix, ImConfig.IM_USER_PARTITIONS, "4",
        ImConfig.IM_CONVERSATION_PARTITIONS, "2"));
    ImConfig config = ImConfig.fromEnv(env).withEndpoints(it.bootstrapServers(), it.schemaRegistryUrl());
    Map<String, String> childEnv = Map.of(ImConfig.KAFKA_BOOTSTRAP_SERVERS, it.bootstrapServers(),
        ImConfig.SCHEMA_REGISTRY_URL, it.schemaRegistryUrl(), ImConfig.IM_TOPIC_PREFIX, prefix,
        ImConfig.IM_USER_PARTITIONS, "4", ImConfig.IM_CONVERSATION_PARTITIONS, "2",
        "IM_LOCAL_ENDPOINTS_FILE", tmp.resolve("none.properties").toString());
    TopicNames g0 = TopicNames.withPrefix(prefix);
    TopicNames g1 = g0.inGeneration(1);
    RestSchemaRegistryClient registry = new RestSchemaRegistryClient(it.schemaRegistryUrl());
    ImTopics topics = new ImTopics(g0, registry);
    try (Admin admin = Admin.create(config.clientProperties())) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(g0, config));
    }
    Map<String, String> env1 = new HashMap<>(env);
    env1.put(ImConfig.IM_INBOX_GENERATION, "1");
    ImConfig config1 = ImConfig.fromEnv(env1).withEndpoints(it.bootstrapServers(), it.schemaRegistryUrl());

    List<ChatMessage> sent = Collections.synchronizedList(new ArrayList<>());
    AtomicReference<Exception> sendFailure = new AtomicReference<>();
    AtomicBoolean sending = new AtomicBoolean(true);
    Path log = tmp.resolve("grow.log");
    Map<Integer, Integer> ports = new ConcurrentHashMap<>();
    long started = System.nanoTime();
    try (PipelineRuntime fanout = new PipelineRuntime(config.withHttpPort(0, tmp.resolve("fanout")), env, topics);
        Stoppable inbox0 = new Stoppable(new PipelineRuntime(config.withHttpPort(0, tmp.resolve("inbox0")), env,
            topics));
        PipelineRuntime inbox1 = new PipelineRuntime(config1.withHttpPort(0, tmp.resolve("inbox1")), env1,
            new ImTopics(g1, registry));
        SyncingDevices devices = new SyncingDevices(USERS, ports);
        WsDevices ws = new WsDevices(WS_USERS);
        KafkaProducer<String, ChatMessage> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
            it.bootstrapServers(), "enable.idempotence", true, "acks", "all", "linger.ms", 5),
            topics.messages().keySerde().serializer(), topics.messages().valueSerde().serializer())) {
      // Given the fan-out and generation 0's inbox store
      fanout.start(List.of(new FanoutComponent()));
      inbox0.runtime().start(List.of(new InboxStoreComponent(), new PushGatewayComponent()));
      await().atMost(Duration.ofSeconds(90)).until(() -> fanout.healthy() && inbox0.runtime().healthy());
      ports.put(0, inbox0.runtime().http().port());
      // and a steady stream of direct messages (about 400/s), all the time of the grow
      Thread sender = new Thread(() -> {
        for (int i = 0; sending.get(); i++) {
          ChatMessage m = direct("u" + (i % USERS), "u" + ((i * 7 + 1) % USERS), i);
          sent.add(m);
          producer.send(new ProducerRecord<>(topics.messages().name(), m.getConversationId(), m), (md, e) -> {
            if (e != null) {
              sendFailure.set(e);
            }
          });
          if (i % 20 == 19) {
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
          }
        }
        producer.flush();
      }, "online-grow-sender");
      sender.start();
      // and each user's phone syncing it over HTTP and committing its cursor, all the time
      devices.start();
      await().atMost(Duration.ofSeconds(30)).until(() -> sent.size() >= 600);
      await().atMost(Duration.ofSeconds(30)).until(() -> devices.noneFailed()
          && devices.phones().stream().allMatch(p -> p.receivedCount() > 0));
      // and ten WebSocket devices on generation 0's push gateway, storing and ACKing what they receive
      ws.connectAll(ports.get(0), Duration.ofSeconds(30));

      // and each user's tablet committed a cursor in the middle of what it had synced
      Map<String, Long> oldCursors = commitCursors(config, topics, g0);

      // When the online grow runs, throttled, and is SIGKILLed during its copy
      Process first =
          InboxGrowIT.start(childEnv, log, "--online", "--fence-timeout", "30", "--batch", "20", "--max-rate", "300");
      try (Admin admin = Admin.create(config.clientProperties())) {
        String group = InboxGrow.migrationId(prefix, 1);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
            .until(() -> InboxGrowIT.committedInbox(admin, group, g0.inbox()) >= 300 || !first.isAlive());
        assertThat(first.isAlive()).as("still copying when killed; log:\n%s", Files.readString(log)).isTrue();
        first.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      // And is run again to its end, the messages still flowing and the phones syncing but u0's (offline meanwhile)
      SyncingDevices.Phone offline = devices.phones().get(0);
      offline.moveTo(-1);
      await().atMost(Duration.ofSeconds(30)).until(() -> devices.noneFailed() && offline.waiting());
      // (and the WebSocket devices too)
      ws.disconnectAll();
      Process second = InboxGrowIT.start(childEnv, log, "--online", "--fence-timeout", "30");
      assertThat(second.waitFor(60, TimeUnit.SECONDS)).as("second run finished; log:\n%s", Files.readString(log))
          .isTrue();
      assertThat(second.exitValue()).as("exit status; log:\n%s", Files.readString(log)).isZero();
      long live = System.nanoTime();
      // and u0's phone, back online, syncs the rest of generation 0 (final since the fences)
      offline.moveTo(0);
      Map<String, List<Entry>> final0 = read(config, topics, g0.inbox());
      int u0InGeneration0 = final0.get("u0").size();
      // and the WebSocket devices, back on generation 0's gateway, receive and ACK the rest of generation 0 there
      ws.moveAll(ports.get(0));

      // And generation 1's inbox store starts next to generation 0's, with the cursors the grow translated
      inbox1.start(List.of(new InboxStoreComponent(), new PushGatewayComponent()));
      await().atMost(Duration.ofSeconds(90)).until(inbox1::healthy);
      ports.put(1, inbox1.http().port());
      devices.awaitCommitted(inbox1.http().port(), readCursors(config, topics, g1.deviceCursors()));
      await().atMost(Duration.ofSeconds(30)).until(() -> devices.noneFailed()
          && offline.receivedInGeneration0() >= u0InGeneration0);
      // (u0's committed cursor there, translated before u0 synced the rest of generation 0, is behind the copy of
      // the last entry u0 received: a resync from it would bring those entries again)
      List<Entry> u0Copied = read(config, topics, g1.inbox()).get("u0").stream().filter(Entry::copied).toList();
      assertThat(offline.committed(inbox1.http().port())).as("u0's translated committed cursor")
          .isLessThan(u0Copied.get(u0Copied.size() - 1).offset());
      // (each WebSocket device has all of generation 0, ACKed past its cursor the grow translated: resuming from that
      // committed cursor would bring the rest of generation 0 again)
      await().atMost(Duration.ofSeconds(30)).until(() -> ws.noneFailed() && ws.devices().stream()
          .allMatch(d -> d.receivedCount() >= final0.get(d.user).size()));
      Map<String, Long> translated = readCursors(config, topics, g1.deviceCursors());
      Map<String, List<Entry>> copied1 = read(config, topics, g1.inbox());
      for (WsDevices.Ws d : ws.devices()) {
        List<Entry> copies = copied1.get(d.user).stream().filter(Entry::copied).toList();
        assertThat(translated.getOrDefault(d.user + "|" + WsDevices.DEVICE, -1L)).as(d.user + "'s translated cursor")
            .isLessThan(copies.get(copies.size() - 1).offset());
      }
      // and five phones move to it while generation 0's still serves, and the WebSocket devices to its push gateway
      // with their own cursors
      devices.phones().subList(0, EARLY).forEach(p -> p.moveTo(1));
      ws.moveAll(ports.get(1));
      // and the others, still syncing generation 0 (final since the fences), move once those five resynced, none of
      // them waiting
      List<SyncingDevices.Phone> rest = devices.phones().subList(EARLY, USERS);
      await().atMost(Duration.ofSeconds(30)).until(() -> devices.noneFailed()
          && devices.phones().subList(0, EARLY).stream().allMatch(p -> !p.resyncs().isEmpty()));
      rest.forEach(p -> p.moveTo(1));
      await().atMost(Duration.ofSeconds(30)).until(() -> devices.noneFailed()
          && devices.phones().stream().allMatch(p -> !p.resyncs().isEmpty()));
      // and then, the WebSocket devices resumed there, generation 0's inbox store (and push gateway) stops and the
      // grow runs again
      ws.awaitSynced(Duration.ofSeconds(60));
      inbox0.stop();
      ByteArrayOutputStream rerun = new ByteArrayOutputStream();
      new InboxGrow(config, topics, 0, new PrintStream(rerun, true, StandardCharsets.UTF_8))
          .run(new InboxGrow.Options(8, 500, 0, true, Duration.ofSeconds(30)));
      assertThat(rerun.toString(StandardCharsets.UTF_8)).contains("generation 1 is live already");
      devices.awaitCommitted(inbox1.http().port(), readCursors(config, topics, g1.deviceCursors()));
      int atMove = sent.size();
      await().atMost(Duration.ofSeconds(30)).until(() -> sent.size() >= atMove + 400);
      sending.set(false);
      sender.join(30_000);
      assertThat(sendFailure.get()).isNull();

      // Then every message's two entries arrive, in generation 0 before the fences or generation 1 after them
      List<ChatMessage> all = List.copyOf(sent);
      await().atMost(Duration.ofSeconds(30)).until(() -> read(config, topics, g0.inbox()).values().stream()
          .mapToInt(List::size).sum() + fresh(read(config, topics, g1.inbox())) == 2 * all.size());
      Map<String, List<Entry>> old = read(config, topics, g0.inbox());
      Map<String, List<Entry>> grown = read(config, topics, g1.inbox());
      int freshCount = fresh(grown);
      assertThat(freshCount).as("entries written to generation 1 after the switch").isPositive();

      Map<String, Map<String, List<String>>> expected = expectedPerUserAndConversation(all);
      Map<String, Long> newCursors = readCursors(config, topics, g1.deviceCursors());
      for (int u = 0; u < USERS; u++) {
        String user = "u" + u;
        List<Entry> before = old.getOrDefault(user, List.of());
        List<Entry> after = grown.getOrDefault(user, List.of());
        List<String> copied = after.stream().filter(Entry::copied).map(Entry::messageId).toList();
        // generation 0's entries, in order, each once, and only then the new ones
        assertThat(copied).as(user).isEqualTo(before.stream().map(Entry::messageId).toList());
        assertThat(after.subList(0, copied.size())).as(user).allMatch(Entry::copied);
        List<String> ids = after.stream().map(Entry::messageId).toList();
        assertThat(ids).as(user + ": none twice").doesNotHaveDuplicates();
        // none lost, each conversation's order kept
        assertThat(byConversation(after)).as(user).isEqualTo(expected.get(user));
        // the tablet's cursor resumes right after what it had seen
        long oldCursor = oldCursors.get(user);
        List<String> unseenBefore = new ArrayList<>(before.stream().filter(e -> e.offset() > oldCursor)
            .map(Entry::messageId).toList());
        after.stream().filter(e -> !e.copied()).forEach(e -> unseenBefore.add(e.messageId()));
        long newCursor = newCursors.get(user + "|tablet");
        assertThat(after.stream().filter(e -> e.offset() > newCursor).map(Entry::messageId).toList()).as(user)
            .isEqualTo(unseenBefore);
      }

      // And each phone received exactly its user's log, in order, across the switch
      Map<String, List<String>> logs = new HashMap<>();
      grown.forEach((user, entries) -> logs.put(user, entries.stream().map(Entry::messageId).toList()));
      await().atMost(Duration.ofSeconds(60)).until(() -> devices.noneFailed()
          && devices.phones().stream().allMatch(p -> caughtUp(p.received(), logs.get(p.user))));
      devices.close();
      await().atMost(Duration.ofSeconds(60)).until(() -> ws.noneFailed()
          && ws.devices().stream().allMatch(d -> caughtUp(d.received(), logs.get(d.user))));
      ws.close();
      int wsRepeats = 0;
      int wsLost = 0;
      for (WsDevices.Ws d : ws.devices()) {
        List<String> got = d.received();
        List<String> want = logs.get(d.user);
        wsRepeats += got.size() - new LinkedHashSet<>(got).size();
        wsLost += (int) want.stream().filter(id -> !got.contains(id)).count();
        assertThat(got).as(d.user + "'s WebSocket device: exactly its log, in order").isEqualTo(want);
      }
      System.out.printf("OnlineInboxGrowIT: %d WebSocket devices received %d-%d entries each, %d received again, %d"
          + " lost, %d connects, unexpected closes %s%n", ws.devices().size(),
          ws.devices().stream().mapToInt(WsDevices.Ws::receivedCount).min().orElse(0),
          ws.devices().stream().mapToInt(WsDevices.Ws::receivedCount).max().orElse(0), wsRepeats, wsLost,
          ws.devices().stream().mapToInt(WsDevices.Ws::connects).sum(),
          ws.devices().stream().flatMap(d -> d.unexpectedCloses().stream()).toList());
      int repeats = 0;
      for (SyncingDevices.Phone p : devices.phones()) {
        List<String> got = p.received();
        List<String> want = logs.get(p.user);
        assertThat(p.resyncs()).as(p.user + ": one 409 at the switch").hasSize(1);
        assertThat(SyncCursor.decode(p.resyncs().get(0)).generation()).isEqualTo(1);
        assertThat(p.receivedInGeneration0()).as(p.user + ": synced on generation 0").isPositive();
        repeats += got.size() - new LinkedHashSet<>(got).size();
        // moved before the rerun, after committing on generation 0 past its translated cursor (u0 by far)
        assertThat(got).as(p.user + ": exactly its log, in order").isEqualTo(want);
      }
      System.out.printf("OnlineInboxGrowIT: %d messages, %d entries copied, %d written to generation 1; %d phones"
          + " synced %d times (%d retries), %d entries received again (u0: %d); live after %d s,"
          + " %d s in all%n", all.size(), grown.values().stream().mapToInt(List::size).sum() - freshCount,
          freshCount, USERS, devices.phones().stream().mapToLong(SyncingDevices.Phone::syncs).sum(),
          devices.phones().stream().mapToLong(SyncingDevices.Phone::retries).sum(), repeats,
          offline.received().size() - logs.get("u0").size(),
          TimeUnit.NANOSECONDS.toSeconds(live - started), TimeUnit.NANOSECONDS.toSeconds(System.nanoTime()
              - started));

      // And bin/im inbox status shows the switch done
      ByteArrayOutputStream status = new ByteArrayOutputStream();
      GrowStatus.print(config, g0, 0, new PrintStream(status, true, StandardCharsets.UTF_8));
      assertThat(status.toString(StandardCharsets.UTF_8)).contains("online switch: 1 LIVE, fan-out tasks fenced 2/2");
    }
  }

  /** The phone received at least as many entries as its user's log holds, the last one last. */
  private static boolean caughtUp(List<String> got, List<String> log) {
    return got.size() >= log.size() && got.get(got.size() - 1).equals(log.get(log.size() - 1));
  }

  private static Map<String, List<String>> byConversation(List<Entry> entries) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    entries.forEach(e -> out.computeIfAbsent(e.conversationId(), c -> new ArrayList<>()).add(e.messageId()));
    return out;
  }

  /** Stops a runtime before the end of the test, once. */
  private static final class Stoppable implements AutoCloseable {
    private final PipelineRuntime runtime;
    private final AtomicBoolean stopped = new AtomicBoolean();

    Stoppable(PipelineRuntime runtime) {
      this.runtime = runtime;
    }

    PipelineRuntime runtime() {
      return runtime;
    }

    void stop() {
      if (stopped.compareAndSet(false, true)) {
        runtime.close();
      }
    }

    @Override
    public void close() {
      stop();
    }
  }

  private static ChatMessage direct(String from, String to, int i) {
    return ChatMessage.newBuilder().setMessageId("m" + i).setClientMsgId("c" + i)
        .setConversationId(Ids.direct(from, to)).setConversationType(ConversationType.DIRECT)
        .setType(MessageType.MESSAGE).setSenderId(from).setRecipientId(to).setBody("b" + i)
        .setSentAt(Instant.now()).setAttributes(Map.of()).build();
  }

  /** Per user, per conversation: the message ids in send order (each message is in its sender's and recipient's). */
  private static Map<String, Map<String, List<String>>> expectedPerUserAndConversation(List<ChatMessage> all) {
    Map<String, Map<String, List<String>>> out = new HashMap<>();
    for (ChatMessage m : all) {
      for (String user : new LinkedHashSet<>(List.of(m.getSenderId(), m.getRecipientId()))) {
        out.computeIfAbsent(user, u -> new LinkedHashMap<>())
            .computeIfAbsent(m.getConversationId(), c -> new ArrayList<>()).add(m.getMessageId());
      }
    }
    return out;
  }

  private static int fresh(Map<String, List<Entry>> inbox) {
    return (int) inbox.values().stream().flatMap(List::stream).filter(e -> !e.copied()).count();
  }

  /** Each user's tablet commits the offset of the middle one of its entries so far. */
  private static Map<String, Long> commitCursors(ImConfig config, ImTopics topics, TopicNames g0) throws Exception {
    Map<String, List<Entry>> now = read(config, topics, g0.inbox());
    Map<String, Long> cursors = new HashMap<>();
    try (KafkaProducer<String, DeviceCursor> producer = new KafkaProducer<>(Map.of("bootstrap.servers",
        config.clientProperties().get("bootstrap.servers"), "acks", "all"),
        topics.deviceCursors().keySerde().serializer(), topics.deviceCursors().valueSerde().serializer())) {
      for (int u = 0; u < USERS; u++) {
        String user = "u" + u;
        List<Entry> entries = now.getOrDefault(user, List.of());
        long seq = entries.isEmpty() ? -1 : entries.get(entries.size() / 2).offset();
        cursors.put(user, seq);
        producer.send(new ProducerRecord<>(g0.deviceCursors(), user, new DeviceCursor(user, "tablet", seq)))
            .get(30, TimeUnit.SECONDS);
      }
    }
    return cursors;
  }

  private static Map<String, List<Entry>> read(ImConfig config, ImTopics topics, String topic) {
    Map<String, List<Entry>> out = new HashMap<>();
    var deserializer = topics.inbox().valueSerde().deserializer();
    try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(MigrationClients.reader(config))) {
      MigrationClients.readAll(reader, MigrationClients.fromStart(reader, List.of(topic)), r -> {
        InboxEntry e = deserializer.deserialize(topic, r.headers(), r.value());
        out.computeIfAbsent(new String(r.key(), StandardCharsets.UTF_8), k -> new ArrayList<>())
            .add(new Entry(r.offset(), e.getMessageId(), e.getConversationId(),
                PrevPosition.readFrom(r.headers()).isPresent()));
      });
    }
    return out;
  }

  private static Map<String, Long> readCursors(ImConfig config, ImTopics topics, String topic) {
    Map<String, Long> out = new HashMap<>();
    var deserializer = topics.deviceCursors().valueSerde().deserializer();
    try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(MigrationClients.reader(config))) {
      MigrationClients.readAll(reader, MigrationClients.fromStart(reader, List.of(topic)), r -> {
        DeviceCursor c = deserializer.deserialize(topic, r.headers(), r.value());
        out.put(c.getUserId() + "|" + c.getDeviceId(), c.getSeq());
      });
    }
    return out;
  }

}
