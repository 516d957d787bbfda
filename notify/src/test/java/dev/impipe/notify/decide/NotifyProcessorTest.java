package dev.impipe.notify.decide;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.notify.NotifyConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NotifyProcessorTest {

  @Test
  void thePunctuatorRunsEveryQuarterOfIMNotifyAfterAtMost250Ms() {
    assertThat(NotifyProcessor.periodMs(NotifyConfig.fromEnv(Map.of("IM_NOTIFY_AFTER", "400ms")))).isEqualTo(100);
    assertThat(NotifyProcessor.periodMs(NotifyConfig.fromEnv(Map.of("IM_NOTIFY_AFTER", "100ms")))).isEqualTo(25);
    assertThat(NotifyProcessor.periodMs(NotifyConfig.defaults())).isEqualTo(250);
  }
}
