package dev.impipe.delay;

import dev.impipe.delay.internal.AdminTopicCache;
import dev.impipe.runtime.app.ComponentContext;
import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.runtime.config.ConfigTable;
import java.util.List;
import org.apache.kafka.clients.admin.Admin;

/** Runs the delay topology as the Streams app {@code <prefix>delay}. */
public final class DelayComponent implements PipelineComponent {

  public static final String NAME = "delay";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public List<ConfigTable> configTables() {
    return List.of(DelayConfig.TABLE);
  }

  @Override
  public void start(ComponentContext context) {
    DelayConfig config = DelayConfig.fromEnv(context.env());
    Admin admin = context.closeOnShutdown(Admin.create(context.config().clientProperties()));
    AdminTopicCache topicExists = new AdminTopicCache(admin, config.topicCacheMs(), System::currentTimeMillis);
    DelayMetrics metrics = new DelayMetrics(context.metrics());
    context.startStreams(NAME, DelayTopology.build(context.topics(), config, topicExists, metrics),
        config.streamsOverrides());
  }
}
