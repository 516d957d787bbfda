package dev.impipe.bench.scenario;

import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.bench.BenchCluster;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.inbox.InboxStoreTopology;
import dev.impipe.notify.NotifyComponent;
import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.edge.app.PipelineRuntime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * What notifications cost the write path ({@link OnOffCost}): the fan-out workload drained by fan-out and the inbox
 * store, and by the same beside the deciding app with a registered device for every user of the workload (the worst
 * case: every inbox entry opens or grows a pending burst), each drain ending when every app has read the last entry. The
 * devices' notifications fall due after the drain ({@code IM_NOTIFY_AFTER} of 1 minute): the decisions themselves
 * are measured by the scenario's other phases.
 */
final class NotifyCost implements OnOffCost.Subject {

  @Override
  public String name() {
    return "notify";
  }

  @Override
  public List<PipelineComponent> components(boolean on) {
    return on ? List.of(new FanoutComponent(), new InboxStoreComponent(), new NotifyComponent())
        : List.of(new FanoutComponent(), new InboxStoreComponent());
  }

  @Override
  public Map<String, String> env(boolean on) {
    return Map.of("IM_NOTIFY_AFTER", "60s");
  }

  @Override
  public Map<String, Set<String>> followers(boolean on, BenchCluster cluster) {
    Set<String> inbox = Set.of(cluster.names().inbox());
    return on ? Map.of(InboxStoreTopology.APP_NAME, inbox, NotifyComponent.NAME, inbox)
        : Map.of(InboxStoreTopology.APP_NAME, inbox);
  }

  @Override
  public void prepare(boolean on, BenchCluster cluster, Workload workload, PipelineRuntime runtime)
      throws Exception {
    if (!on) {
      return;
    }
    String topic = cluster.names().pushRegistrations();
    try (KafkaProducer<String, PushRegistration> p = cluster.producer(
        cluster.topics().pushRegistrations().valueSerde().serializer())) {
      for (int u = 0; u < workload.users(); u++) {
        String user = Workload.user(u);
        p.send(new ProducerRecord<>(topic, user, PushRegistration.newBuilder().setUserId(user).setDeviceId("phone")
            .setRegistrationId("cost-" + user).setProvider(PushProvider.WEBHOOK).setRemoved(false)
            .setAt(Instant.now()).build()));
      }
    }
    BenchCluster.await("the decider has read every registration", Duration.ofMinutes(2),
        cluster.caughtUp(NotifyComponent.NAME, Set.of(topic)));
  }
}
