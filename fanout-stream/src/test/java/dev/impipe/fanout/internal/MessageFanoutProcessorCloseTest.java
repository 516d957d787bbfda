package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThatCode;

import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * Streams may close a processor it never initialised (a task closed while it was still being created or restored):
 * the fan-out processor's close then has nothing to release and must not fail. (Its close after init, which drops
 * the dedupe filter, is {@code ConversationScopedDedupeTest}'s.)
 */
class MessageFanoutProcessorCloseTest {

  @Test
  void aProcessorClosedBeforeItsInitClosesQuietly() {
    FanoutNames names = new FanoutNames("members", "groups", "switches", "clock", "past", "dedupe", "sent", "inbox",
        "history", "group-members");
    MessageFanoutProcessor p = new MessageFanoutProcessor(FanoutConfig.defaults(),
        new FanoutMetrics(new SimpleMeterRegistry()), names);
    assertThatCode(p::close).doesNotThrowAnyException();
  }
}
