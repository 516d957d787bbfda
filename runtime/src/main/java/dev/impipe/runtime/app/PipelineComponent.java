package dev.impipe.runtime.app;

import dev.impipe.runtime.config.ConfigTable;
import java.util.List;

/**
 * A part of the pipeline that runs in a process: it may start Kafka Streams apps, clients and HTTP routes through
 * the context (HTTP routes through the edge's {@code dev.impipe.edge.app.PipelineComponent}). Components are found with {@link java.util.ServiceLoader}: a module lists its component in
 * {@code META-INF/services/dev.impipe.runtime.app.PipelineComponent}, and {@code bin/im local} runs them all.
 */
public interface PipelineComponent {

  /** Short name, e.g. {@code fanout}; Streams apps it starts are named after it. */
  String name();

  /** Start order: lower first (producers of topics before their consumers is not required, but reads nicer). */
  default int order() {
    return 100;
  }

  /** The component's settings, each declared once; the runtime logs their values (secrets masked) before start. */
  default List<ConfigTable> configTables() {
    return List.of();
  }

  /** Starts the component; resources it opens are registered with {@link ComponentContext#closeOnShutdown}. */
  void start(ComponentContext context) throws Exception;
}
