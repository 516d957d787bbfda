package dev.impipe.inbox;

import dev.impipe.avro.DeviceCursor;
import dev.impipe.inbox.conversations.ConversationOrders;
import dev.impipe.inbox.conversations.ConversationsConfig;
import dev.impipe.inbox.http.ConversationRoutes;
import dev.impipe.inbox.http.InboxRoutes;
import dev.impipe.inbox.http.OwnerRouter;
import dev.impipe.edge.app.ComponentContext;
import dev.impipe.runtime.app.RequestProducers;
import dev.impipe.edge.app.PipelineComponent;
import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.topics.Topic;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import dev.impipe.runtime.streams.StreamThreadConsumers;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.HostInfo;

/** Runs the inbox store: the Streams app materialising inbox, cursors and timelines, and its HTTP API. */
public final class InboxStoreComponent implements PipelineComponent {

  @Override
  public String name() {
    return InboxStoreTopology.APP_NAME;
  }

  @Override
  public int order() {
    return 300;
  }

  @Override
  public List<ConfigTable> configTables() {
    return List.of(InboxStoreConfig.TABLE, ConversationsConfig.TABLE);
  }

  @Override
  public void start(ComponentContext context) {
    InboxStoreConfig cfg = InboxStoreConfig.fromEnv(context.env());
    Map<String, Object> overrides = new HashMap<>();
    // Changelog records carry the store position, so minSeq (IQv2 position bounds) also holds after a store was
    // restored from its changelog on another instance.
    overrides.put(StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, true);
    // Lets the conversation list ask its thread's consumer for the committed offsets it replays up to after a
    // restart (ListCheckpoints).
    overrides.put(StreamsConfig.DEFAULT_CLIENT_SUPPLIER_CONFIG, StreamThreadConsumers.class.getName());
    ConversationsConfig conversations = ConversationsConfig.fromEnv(context.env());
    // The list order kept in memory per task: written by the topology's processors, read by the list route.
    ConversationOrders orders = new ConversationOrders(conversations.orderCacheUsers());
    KafkaStreams streams = context.startStreams(InboxStoreTopology.APP_NAME,
        InboxStoreTopology.build(context.topics(), cfg, conversations, orders), overrides);

    Topic<String, DeviceCursor> cursors = context.topics().deviceCursors();
    KafkaProducer<String, DeviceCursor> producer = RequestProducers.create(context, cursors, "inbox-store-cursors",
        cfg.queryTimeoutMs());

    OwnerRouter router = new OwnerRouter(streams, HostInfo.buildFromEndpoint(context.applicationServer()),
        cfg.queryTimeoutMs(), cfg.maxWaitingPerUser(), context.http(), context.metrics(), InboxStoreTopology.APP_NAME);
    // Reads the inbox's end offsets, once per partition, for a cursor of the previous generation (ADR 0014).
    Admin admin = context.closeOnShutdown(Admin.create(context.config().clientProperties()));
    new InboxRoutes(streams, context.topics().names(), router, context.http(), producer, cfg.queryTimeoutMs(),
        cfg.maxResponseBytes(), admin).register(context.http());
    ConversationRoutes.start(context, streams, router, cfg.queryTimeoutMs(), orders);
  }
}
