package dev.impipe.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.InvalidConfigException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The notify settings read from the environment, and the Web Push endpoint allow-list. */
class NotifyConfigTest {

  private static NotifyConfig withEndpoints(String raw) {
    return NotifyConfig.fromEnv(Map.of(NotifyConfig.IM_NOTIFY_PUSH_ENDPOINTS, raw));
  }

  @Test
  void byDefaultOnlyTheBrowserPushServicesAreAllowed() {
    NotifyConfig config = NotifyConfig.defaults();

    assertThat(config.pushEndpoints()).containsExactly("https://fcm.googleapis.com/",
        "https://updates.push.services.mozilla.com/", "https://web.push.apple.com/");
    assertThat(config.endpointAllowed("https://fcm.googleapis.com/fcm/send/abc")).isTrue();
    assertThat(config.endpointAllowed("https://fcm.googleapis.com.attacker.net/x")).isFalse();
    assertThat(config.endpointAllowed(null)).isFalse();
  }

  @Test
  void prefixesAreTrimmedAndBlankOnesSkipped() {
    NotifyConfig config = withEndpoints(" https://push.example.com/ , ,http://localhost:8099/relay/,");

    assertThat(config.pushEndpoints()).containsExactly("https://push.example.com/", "http://localhost:8099/relay/");
    assertThat(config.endpointAllowed("http://localhost:8099/relay/sub-1")).isTrue();
  }

  @Test
  void aSchemeInAnyCaseIsAccepted() {
    assertThat(withEndpoints("HTTPS://Push.Example.com/").pushEndpoints()).containsExactly("HTTPS://Push.Example.com/");
  }

  @Test
  void aPrefixThatDoesNotEndItsHostIsRefusedNamingTheVariable() {
    // "https://push.example.com" would also allow "https://push.example.com.attacker.net/..."
    assertThatThrownBy(() -> withEndpoints("https://fcm.googleapis.com/,https://push.example.com"))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_NOTIFY_PUSH_ENDPOINTS");
    assertThatThrownBy(() -> withEndpoints("https://")).isInstanceOf(InvalidConfigException.class);
  }

  @Test
  void aPrefixOfAnotherSchemeIsRefused() {
    assertThatThrownBy(() -> withEndpoints("ftp://push.example.com/")).isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("http(s) URL prefixes");
    assertThatThrownBy(() -> withEndpoints("push.example.com/")).isInstanceOf(InvalidConfigException.class);
  }

  @Test
  void aListOfNothingButBlanksIsRefused() {
    assertThatThrownBy(() -> NotifyConfig.parsePrefixes(" , ,")).isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("is empty");
  }

  @Test
  void aCopyWithOtherTimingKeepsEverythingElse() {
    NotifyConfig config = withEndpoints("https://push.example.com/");

    NotifyConfig copy = config.withTiming(Duration.ofSeconds(1), Duration.ZERO);

    assertThat(copy.after()).isEqualTo(Duration.ofSeconds(1));
    assertThat(copy.coalesce()).isZero();
    assertThat(copy).usingRecursiveComparison().ignoringFields("after", "coalesce").isEqualTo(config);
    assertThat(copy.pushEndpoints()).isEqualTo(List.of("https://push.example.com/"));
  }
}
