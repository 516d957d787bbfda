package dev.impipe.testkit;

import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/** The child side of {@link ChildPipeline}: {@code ChildPipelineMain <component class>}, config from the env. */
public final class ChildPipelineMain {

  static final String RUNNING = "CHILD-PIPELINE-RUNNING";

  private ChildPipelineMain() {}

  public static void main(String[] args) throws Exception {
    PipelineComponent component = (PipelineComponent) Class.forName(args[0]).getDeclaredConstructor().newInstance();
    ImConfig config = ImConfig.fromEnv(System.getenv());
    ImTopics topics = new ImTopics(TopicNames.withPrefix(config.topicPrefix()),
        new RestSchemaRegistryClient(config.requireSchemaRegistryUrl()));
    PipelineRuntime runtime = new PipelineRuntime(config, System.getenv(), topics);
    runtime.start(List.of(component));
    while (!runtime.healthy()) {
      LockSupport.parkNanos(50_000_000L);
    }
    System.out.println(RUNNING);
    System.out.flush();
    Thread.currentThread().join();
  }
}
