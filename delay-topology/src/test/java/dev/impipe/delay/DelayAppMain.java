package dev.impipe.delay;

import dev.impipe.runtime.app.PipelineRuntime;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The delay component alone in a JVM of its own, configured from the environment, so a test can kill it with
 * SIGKILL. Prints {@link #RUNNING} once its Streams app is RUNNING.
 */
public final class DelayAppMain {

  static final String RUNNING = "DELAY-APP-RUNNING";

  private DelayAppMain() {}

  public static void main(String[] args) throws Exception {
    ImConfig config = ImConfig.fromEnv(System.getenv());
    ImTopics topics = new ImTopics(TopicNames.withPrefix(config.topicPrefix()),
        new RestSchemaRegistryClient(config.requireSchemaRegistryUrl()));
    PipelineRuntime runtime = new PipelineRuntime(config, System.getenv(), topics);
    runtime.start(List.of(new DelayComponent()));
    while (!runtime.healthy()) {
      LockSupport.parkNanos(50_000_000L);
    }
    System.out.println(RUNNING);
    System.out.flush();
    Thread.currentThread().join();
  }
}
