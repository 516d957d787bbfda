package dev.impipe.bench.scenario;

import dev.impipe.avro.ChatMessage;
import dev.impipe.bench.BenchCluster;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.SchemaRegistryClients;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The half-rate load of {@code bench fanout --load-jvm 1} in a JVM of its own, so that its producer, its code and its
 * garbage are not the fan-out app's (as {@link SyncLoad} is for {@code bench sync}): the same workload (same seed,
 * so the same groups the app has memberships for) with client message ids of its own, each message stamped when sent
 * and keyed by its conversation, at a fixed rate for a fixed time. Prints {@code started <epoch ms>} once it paces,
 * then {@code sent <count>}; exit status 1 if a record could not be produced.
 *
 * <p>Arguments: bootstrap, registry URL, topic prefix, users, groups, large groups, large size, seed, messages per
 * second, seconds.
 */
public final class FanoutLoad {

  private FanoutLoad() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 10) {
      System.err.println("usage: FanoutLoad BOOTSTRAP REGISTRY PREFIX USERS GROUPS LARGE LARGE_SIZE SEED RATE SECONDS");
      System.exit(2);
    }
    String prefix = args[2];
    Workload workload = new Workload(Integer.parseInt(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]),
        Integer.parseInt(args[6]), Long.parseLong(args[7]), prefix + "load");
    double rate = Double.parseDouble(args[8]);
    double seconds = Double.parseDouble(args[9]);
    ImTopics topics = new ImTopics(TopicNames.withPrefix(prefix), SchemaRegistryClients.forUrl(args[1]));
    String topic = topics.names().messages();
    Map<String, Object> props =
        BenchCluster.loadProducerProperties(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]));
    Support.SendErrors errors = new Support.SendErrors();
    long sent = 0;
    try (KafkaProducer<String, ChatMessage> producer =
        new KafkaProducer<>(props, new StringSerializer(), topics.messages().valueSerde().serializer())) {
      // Metadata and the schema id are fetched before pacing starts (one message serialized and not sent).
      producer.partitionsFor(topic);
      topics.messages().valueSerde().serializer().serialize(topic, workload.next(Instant.now()).value());
      Support.Pacer pacer = new Support.Pacer(rate);
      System.out.println("started " + System.currentTimeMillis());
      System.out.flush();
      while (pacer.elapsedSeconds() < seconds) {
        for (long k = pacer.due(); k > 0; k--) {
          FanoutScenario.send(producer, topic, workload, errors);
          sent++;
        }
        pacer.pause();
      }
      producer.flush();
    }
    System.out.println("sent " + sent);
    try {
      errors.check();
    } catch (IllegalStateException e) {
      System.out.println(e.getMessage());
      System.exit(1);
    }
  }
}
