package dev.impipe.ingest;

import dev.impipe.edge.app.ComponentContext;
import dev.impipe.edge.app.PipelineComponent;
import dev.impipe.runtime.config.ConfigTable;
import java.time.Clock;
import java.util.List;

/** Serves the sending endpoints of the HTTP API in a pipeline process. */
public final class IngestComponent implements PipelineComponent {

  @Override
  public String name() {
    return "ingest";
  }

  @Override
  public int order() {
    return 10;
  }

  @Override
  public List<ConfigTable> configTables() {
    return List.of(IngestConfig.TABLE);
  }

  @Override
  public void start(ComponentContext context) {
    IngestConfig config = IngestConfig.fromEnv(context.env());
    MessagePublisher publisher = context.closeOnShutdown(new MessagePublisher(context.topics(),
        context.config().clientProperties(), config, Clock.systemUTC()));
    context.closeOnShutdown(publisher.bindMetrics(context.metrics()));
    new IngestRoutes(publisher, config, context.metrics()).register(context.http());
  }
}
