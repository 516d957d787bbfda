package dev.impipe.notify.send;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.Notification;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.notify.NotifyConfig;
import dev.impipe.notify.provider.LocalHttpServer;
import dev.impipe.notify.provider.Providers;
import dev.impipe.notify.provider.TestNotifications;
import dev.impipe.notify.provider.VapidKeys;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.streams.RejectedHeaders;
import dev.impipe.testkit.Drain;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sender on the real broker against a local Web Push service: 201 is sent once, 410 removes exactly that
 * registration, 429 with {@code Retry-After: 1} is sent again no sooner than a second later, a 503 that never ends is
 * tried {@code IM_NOTIFY_MAX_ATTEMPTS} times (with one send in flight at a time, the others go while a retry waits) and lands in {@code im.rejected} with its reason, as does a notification
 * for a provider that is not enabled; the group's offsets reach the end of the topic.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class NotificationSenderIT {

  @TempDir
  Path dir;

  @Test
  void eachAnswerLeadsToWhatTheContractSays() throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("notify-send") + ".";
    TopicNames names = TopicNames.withPrefix(prefix);
    ImConfig imConfig = ImConfig.fromEnv(Map.of("IM_CONVERSATION_PARTITIONS", "2", "IM_USER_PARTITIONS", "2"))
        .withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, imConfig));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));

    // Given a push service: /ok answers 201, /gone 410, /busy 429 (Retry-After: 1) once then 201, /down always 503
    Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    try (LocalHttpServer push = new LocalHttpServer(r -> {
      int n = calls.computeIfAbsent(r.path(), p -> new AtomicInteger()).incrementAndGet();
      return switch (r.path()) {
        case "/push/ok" -> LocalHttpServer.Answer.of(201);
        case "/push/gone" -> LocalHttpServer.Answer.of(410);
        case "/push/busy" -> n == 1 ? new LocalHttpServer.Answer(429, Map.of("Retry-After", "1"), "")
            : LocalHttpServer.Answer.of(201);
        default -> LocalHttpServer.Answer.of(503);
      };
    })) {
      NotifyConfig config = NotifyConfig.fromEnv(Map.of("IM_NOTIFY_MAX_ATTEMPTS", "3", "IM_NOTIFY_RETRY_BACKOFF",
          "100ms", "IM_NOTIFY_PUSH_ENDPOINTS", push.url() + "/push/", "IM_NOTIFY_MAX_IN_FLIGHT", "1"));
      VapidKeys keys = VapidKeys.generate(dir.resolve("vapid.pem"));
      SimpleMeterRegistry meters = new SimpleMeterRegistry();
      try (Providers providers = Providers.fromConfig(config, keys, Clock.systemUTC());
          NotificationSender sender = new NotificationSender(Map.of("bootstrap.servers", env.bootstrapServers()),
              topics, config, providers, meters, Clock.systemUTC()).start();
          KafkaProducer<String, Notification> producer = new KafkaProducer<>(
              Map.of("bootstrap.servers", env.bootstrapServers()), new StringSerializer(),
              topics.notifications().valueSerde().serializer())) {
        // When five notifications are decided (one send at a time): four Web Push ones, busy's first, and one for
        // FCM, which is not enabled here
        for (String user : List.of("busy", "ok", "gone", "down")) {
          producer.send(new ProducerRecord<>(names.notifications(), user, Notification.newBuilder(
              TestNotifications.webPush(push.url() + "/push/" + user)).setUserId(user).setRegistrationId("reg-" + user)
              .setNotificationId(user + ":phone:d:alice:" + user + ":1").setEntryAt(Instant.now()).build()));
        }
        producer.send(new ProducerRecord<>(names.notifications(), "fcm", TestNotifications.base().setUserId("fcm")
            .setProvider("FCM").setToken("t").setRegistrationId("reg-fcm").build()));
        producer.flush();

        // Then every record is finished: the group has committed the end of the topic
        Drain.awaitCaughtUp(env.bootstrapServers(), NotificationSender.groupId(names),
            List.of(names.notifications()), Duration.ofSeconds(60));
        assertThat(sender.running()).isTrue();
      }

      // ... counted by provider and outcome: ok and busy's second try delivered, gone gone, busy once and down three
      // times answered "retry" (two of down's were retried, the third gave up)
      assertThat(meters.counter("im.notify.sent", "provider", "webpush", "outcome", "delivered").count()).isEqualTo(2);
      assertThat(meters.counter("im.notify.sent", "provider", "webpush", "outcome", "gone").count()).isEqualTo(1);
      assertThat(meters.counter("im.notify.sent", "provider", "webpush", "outcome", "retry").count()).isEqualTo(4);
      assertThat(meters.counter("im.notify.retries").count()).isEqualTo(3);
      assertThat(meters.timer("im.notify.latency", "provider", "webpush").count()).isEqualTo(7);

      // ... with exactly the expected requests
      assertThat(count(push, "/push/ok")).isEqualTo(1);
      assertThat(count(push, "/push/gone")).isEqualTo(1);
      assertThat(count(push, "/push/busy")).isEqualTo(2);
      assertThat(count(push, "/push/down")).isEqualTo(3);
      assertThat(push.requests()).hasSize(7);
      // ... the 429's retry waited at least its Retry-After
      List<Instant> busy = push.requests().stream().filter(r -> r.path().equals("/push/busy"))
          .map(LocalHttpServer.Request::at).toList();
      assertThat(Duration.between(busy.get(0), busy.get(1))).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
      // ... and while it waited, the others were sent: a retry does not hold up other users' notifications
      assertThat(push.requests().stream().filter(r -> r.path().equals("/push/ok")).findFirst().orElseThrow().at())
          .isBefore(busy.get(1));
    }

    // ... the 410 removed exactly that registration
    try (KafkaConsumer<String, PushRegistration> regs = new KafkaConsumer<>(readCommitted(env),
        new StringDeserializer(), topics.pushRegistrations().valueSerde().deserializer())) {
      List<ConsumerRecord<String, PushRegistration>> removals = Drain.readToEnd(regs, names.pushRegistrations(),
          Duration.ofSeconds(30));
      assertThat(removals).hasSize(1);
      PushRegistration removal = removals.get(0).value();
      assertThat(removals.get(0).key()).isEqualTo("gone");
      assertThat(removal.getRemoved()).isTrue();
      assertThat(removal.getRegistrationId()).isEqualTo("reg-gone");
      assertThat(removal.getDeviceId()).isEqualTo("phone");
      assertThat(removal.getProvider()).isEqualTo(PushProvider.WEBPUSH);
      assertThat(removal.getRemovedReason()).contains("410");
    }

    // ... and the two that could not be sent are in im.rejected with their reason
    try (KafkaConsumer<String, byte[]> rejected = new KafkaConsumer<>(readCommitted(env), new StringDeserializer(),
        new ByteArrayDeserializer())) {
      Map<String, String> codes = new java.util.TreeMap<>();
      Map<String, String> messages = new java.util.TreeMap<>();
      for (ConsumerRecord<String, byte[]> r : Drain.readToEnd(rejected, names.rejected(), Duration.ofSeconds(30))) {
        codes.put(r.key(), header(r, RejectedHeaders.CODE));
        messages.put(r.key(), header(r, RejectedHeaders.MESSAGE));
        assertThat(header(r, RejectedHeaders.TOPIC)).isEqualTo(names.notifications());
        assertThat(header(r, RejectedHeaders.SOURCE)).isEqualTo("notify");
      }
      assertThat(codes).containsExactly(Map.entry("down", OutcomePolicy.GAVE_UP),
          Map.entry("fcm", OutcomePolicy.PROVIDER_OFF));
      assertThat(messages.get("down")).contains("3 attempts", "503");
    }
  }

  private static long count(LocalHttpServer push, String path) {
    return push.requests().stream().filter(r -> r.path().equals(path)).count();
  }

  private static String header(ConsumerRecord<?, ?> r, String name) {
    var h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  private static Map<String, Object> readCommitted(ItEnvironment.Endpoints env) {
    return Map.of("bootstrap.servers", env.bootstrapServers(), "isolation.level", "read_committed",
        "group.id", ItEnvironment.unique("reader"));
  }
}
