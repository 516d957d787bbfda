package dev.impipe.ack.it;

import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.runtime.topics.TopicNames;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The wheel app in a JVM of its own, so an IT can kill it with SIGKILL (an unclean stop no in-process close can
 * imitate). Args: bootstrap, registry URL, topic prefix, application id, state dir, instance id, tick ms, timeout
 * ms. {@code IM_ACK_STORE_CACHE=true} in its environment turns the record cache on. Prints {@code RUNNING} once the
 * app is, then runs until killed.
 */
public final class WheelChildMain {

  private WheelChildMain() {}

  public static void main(String[] args) throws Exception {
    AckTimeoutConfig config = AckTimeoutConfig.defaults()
        .withTiming(Duration.ofMillis(Long.parseLong(args[6])), Duration.ofMillis(Long.parseLong(args[7])))
        .withStoreCache("true".equals(System.getenv(AckTimeoutConfig.IM_ACK_STORE_CACHE)));
    WheelApps.startAndAwaitRunning(WheelApps.topics(args[2], args[1]), config, new SimpleMeterRegistry(),
        WheelApps.properties(args[0], TopicNames.withPrefix(args[2]), args[3], Path.of(args[4]), args[5]));
    System.out.println("RUNNING");
    System.out.flush();
    Thread.currentThread().join();
  }
}
