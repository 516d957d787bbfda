package dev.impipe.ack.push;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.SharedSettings;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

/**
 * A runnable push worker: user {@code alice} (or the first argument) has a {@code phone} that ACKs every push at
 * once and a {@code tablet} that never does, so the tablet's seqs show up in {@code im.ack-timeouts} one timeout
 * later. Finds the broker and registry like {@code bin/im}: {@code KAFKA_BOOTSTRAP_SERVERS} /
 * {@code SCHEMA_REGISTRY_URL}, else the running {@code bin/im local} ({@code ~/.im/local.properties}).
 */
public final class PushWorkerExample {

  private PushWorkerExample() {}

  public static void main(String[] args) throws Exception {
    String user = args.length > 0 ? args[0] : "alice";
    Map<String, String> env = new HashMap<>(System.getenv());
    Properties local = localEndpoints(env);
    env.putIfAbsent(ImConfig.KAFKA_BOOTSTRAP_SERVERS, local.getProperty("bootstrap.servers", ""));
    env.putIfAbsent(ImConfig.SCHEMA_REGISTRY_URL, local.getProperty("schema.registry.url", ""));
    ImConfig config = ImConfig.fromEnv(env);
    ImTopics topics = new ImTopics(TopicNames.withPrefix(config.topicPrefix()),
        SchemaRegistryClients.forUrl(config.requireSchemaRegistryUrl()));

    InMemoryDeviceChannel channel = new InMemoryDeviceChannel().connect(user, "phone").connect(user, "tablet");
    Map<String, Object> clients = new HashMap<>(config.clientProperties());
    clients.put("auto.offset.reset", "earliest");
    PushWorker worker = new PushWorker(clients, "push-worker-example-" + user, topics, channel, Clock.systemUTC());
    channel.onPush(p -> {
      System.out.printf("pushed %s/%s seq=%d %s: %s%n", p.userId(), p.deviceId(), p.seq(), p.entry().getType(),
          p.entry().getBody());
      if (p.deviceId().equals("phone")) {
        worker.acknowledge(p.userId(), p.deviceId(), p.seq());
      }
    });
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      worker.close();
      stopped.countDown();
    }));
    worker.start();
    System.out.printf("push worker for %s on %s: phone ACKs every push, tablet never does; Ctrl-C stops%n", user,
        config.requireBootstrapServers());
    stopped.await();
  }

  private static Properties localEndpoints(Map<String, String> env) {
    Path file = SharedSettings.LOCAL_ENDPOINTS_FILE.read(env);
    Properties p = new Properties();
    if (Files.exists(file)) {
      try (InputStream in = Files.newInputStream(file)) {
        p.load(in);
      } catch (IOException e) {
        System.err.println("cannot read " + file + ": " + e);
      }
    }
    return p;
  }
}
