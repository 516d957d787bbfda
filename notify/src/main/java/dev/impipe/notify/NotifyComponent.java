package dev.impipe.notify;

import dev.impipe.avro.PushRegistration;
import dev.impipe.inbox.conversations.ConversationsConfig;
import dev.impipe.inbox.http.OwnerRouter;
import dev.impipe.notify.decide.NotifyMetrics;
import dev.impipe.notify.decide.NotifyTopology;
import dev.impipe.notify.http.PushRoutes;
import dev.impipe.notify.http.RoutesConfig;
import dev.impipe.notify.provider.Providers;
import dev.impipe.notify.send.NotificationSender;
import dev.impipe.edge.app.ComponentContext;
import dev.impipe.runtime.app.RequestProducers;
import dev.impipe.edge.app.PipelineComponent;
import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.streams.StreamThreadConsumers;
import dev.impipe.edge.quota.RateQuota;
import dev.impipe.runtime.topics.Topic;
import java.time.Clock;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.HostInfo;

/**
 * Runs the notification module: the deciding Streams app {@code <prefix>notify} (which registered devices get a
 * notification, exactly once), the senders that deliver {@code im.notifications} to the providers (at least once),
 * and the registration routes.
 */
public final class NotifyComponent implements PipelineComponent {

  public static final String NAME = "notify";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int order() {
    return 400;
  }

  @Override
  public List<ConfigTable> configTables() {
    return List.of(NotifyConfig.TABLE, RoutesConfig.TABLE);
  }

  @Override
  public void start(ComponentContext context) throws Exception {
    NotifyConfig cfg = NotifyConfig.fromEnv(context.env());
    Map<String, Object> overrides = new HashMap<>();
    overrides.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, cfg.streamThreads());
    // Wall-clock punctuations run between polls: a short poll keeps decisions close to their due time.
    overrides.put(StreamsConfig.POLL_MS_CONFIG, 50L);
    // Lets a decider ask its thread's consumer whether a start's backlog is fetched (InputHorizon).
    overrides.put(StreamsConfig.DEFAULT_CLIENT_SUPPLIER_CONFIG, StreamThreadConsumers.class.getName());
    KafkaStreams streams = context.startStreams(NAME, NotifyTopology.build(context.topics(), cfg,
        ConversationsConfig.fromEnv(context.env()), new NotifyMetrics(context.metrics())), overrides);

    Providers providers = context.closeOnShutdown(Providers.fromConfig(cfg, Providers.vapidKeys(cfg),
        Clock.systemUTC()));
    NotificationSender sender = context.closeOnShutdown(new NotificationSender(context.config().clientProperties(),
        context.topics(), cfg, providers, context.metrics(), Clock.systemUTC()));
    sender.start();
    context.readiness("notify senders", sender::running);

    Topic<String, PushRegistration> registrations = context.topics().pushRegistrations();
    RoutesConfig routes = RoutesConfig.fromEnv(context.env());
    long timeoutMs = routes.timeout().toMillis();
    KafkaProducer<String, PushRegistration> producer = RequestProducers.create(context, registrations,
        "notify-registrations", timeoutMs);
    OwnerRouter router = new OwnerRouter(streams, HostInfo.buildFromEndpoint(context.applicationServer()),
        timeoutMs, routes.maxWaitingPerUser(), context.http(), context.metrics(), NAME);
    new PushRoutes(new PushRoutes.Wiring(streams, NotifyTopology.REGISTRATIONS_STORE, registrations.name(), router,
        producer, lowerCase(providers.enabled()), providers.vapidPublicKey(), cfg::endpointAllowed,
        new RateQuota(routes.changes(), routes.maxTrackedUsers()), timeoutMs, Clock.systemUTC()))
        .register(context.http());
  }

  /** The providers as clients name them ({@code webpush}; the records say {@code WEBPUSH}). */
  private static Set<String> lowerCase(Set<String> providers) {
    return providers.stream().map(p -> p.toLowerCase(Locale.ROOT))
        .collect(Collectors.toCollection(LinkedHashSet::new));
  }
}
