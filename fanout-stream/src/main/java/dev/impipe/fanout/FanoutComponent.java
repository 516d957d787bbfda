package dev.impipe.fanout;

import dev.impipe.runtime.app.ComponentContext;
import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.topics.GenerationControl;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.StreamsConfig;

/** Runs the fan-out app in a pipeline process. */
public final class FanoutComponent implements PipelineComponent {

  @Override
  public String name() {
    return FanoutTopology.APP_NAME;
  }

  @Override
  public int order() {
    return 20;
  }

  @Override
  public List<ConfigTable> configTables() {
    return List.of(FanoutConfig.TABLE);
  }

  @Override
  public void start(ComponentContext context) {
    FanoutConfig config = FanoutConfig.fromEnv(context.env());
    GenerationWatch watch = context.closeOnShutdown(new GenerationWatch(context.config().clientProperties(),
        GenerationControl.topic(context.topics().names())));
    try {
      // Not a correctness condition (a fenced task holds whatever its view), but a fan-out started during a
      // switch should see it before it writes.
      watch.awaitCaughtUp(Duration.ofSeconds(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading the inbox switch control topic", e);
    }
    context.startStreams(FanoutTopology.APP_NAME,
        FanoutTopology.build(context.topics(), config, new FanoutMetrics(context.metrics()), watch),
        Map.of(StreamsConfig.NUM_STREAM_THREADS_CONFIG, FanoutConfig.THREADS.read(context.env()),
            StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, FanoutConfig.COMMIT_INTERVAL.read(context.env()).toMillis()));
  }
}
