package dev.impipe.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class EnvTest {

  private static final long DAY_MS = 86_400_000L;

  @ParameterizedTest(name = "{0} = {1} ms")
  @CsvSource({
      "1500, 1500",
      "1500ms, 1500",
      "15s, 15000",
      "2m, 120000",
      "24h, 86400000",
      "7d, 604800000",
      "' 7D ', 604800000"})
  void durationsAcceptMillisOrAUnit(String text, long expectedMs) {
    Env env = new Env(Map.of("IM_TIMEOUT", text));

    assertThat(env.durationMs("IM_TIMEOUT", 1, 0, 30 * DAY_MS)).isEqualTo(expectedMs);
  }

  @ParameterizedTest
  @ValueSource(strings = {"soon", "15 seconds", "1.5s", "s", "99999999999999999d"})
  void badDurationsNameTheVariableAndShowAnExample(String text) {
    Env env = new Env(Map.of("IM_TIMEOUT", text));

    assertThatThrownBy(() -> env.durationMs("IM_TIMEOUT", 1, 0, Long.MAX_VALUE))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageStartingWith("IM_TIMEOUT")
        .hasMessageContaining("e.g.");
  }

  @ParameterizedTest
  @ValueSource(strings = {"0s", "31d"})
  void durationsOutOfRangeAreRejected(String text) {
    Env env = new Env(Map.of("IM_TIMEOUT", text));

    assertThatThrownBy(() -> env.durationMs("IM_TIMEOUT", 1, 1, 30 * DAY_MS))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("IM_TIMEOUT=" + text)
        .hasMessageContaining("out of range");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "   "})
  void blankMeansUnset(String blank) {
    Env env = new Env(Map.of("IM_TIMEOUT", blank));

    assertThat(env.durationMs("IM_TIMEOUT", 1234, 0, 10_000)).isEqualTo(1234);
    assertThat(env.integer("IM_TIMEOUT", 5, 0, 10)).isEqualTo(5);
    assertThat(env.optional("IM_TIMEOUT")).isEmpty();
  }
}
