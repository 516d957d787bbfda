package dev.impipe.edge.app;

import dev.impipe.edge.http.HttpApi;
import java.util.Optional;
import org.apache.kafka.streams.KafkaStreams;

/**
 * The context of a process with an HTTP edge: the runtime's ({@link dev.impipe.runtime.app.ComponentContext}) plus
 * the HTTP API that components add routes to.
 */
public interface ComponentContext extends dev.impipe.runtime.app.ComponentContext {

  /** The HTTP API to add routes to. */
  HttpApi http();

  /**
   * The Streams app {@code name} that a component of this process started (the gateway follows where the inbox
   * store's tasks run), or empty when it does not run in this process.
   */
  default Optional<KafkaStreams> streams(String name) {
    return Optional.empty();
  }
}
