package dev.impipe.edge.security;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LoopbackHostsTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
      "localhost, true", "LOCALHOST, true", "127.0.0.1, true", "127.255.0.9, true", "[::1], true", "::1, true",
      "0:0:0:0:0:0:0:1, true", "[0:0:0:0:0:0:0:1], true",
      "127.evil.com, false", "127.0.0.1.nip.io, false", "localhost.evil.com, false", "evil-localhost, false",
      "128.0.0.1, false", "10.0.0.1, false", "0.0.0.0, false", "127.0.0.256, false", "::, false", "[::2], false",
      "1.2.3.4, false", "'', false", "::1.evil, false"})
  void onlyRealLoopbackNamesAndAddressesAreLoopback(String host, boolean loopback) {
    assertThat(LoopbackHosts.isLoopback(host)).isEqualTo(loopback);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(nullValues = "null", value = {
      "localhost:8080, localhost", "127.0.0.1, 127.0.0.1", "[::1]:80, [::1]", "[::1], [::1]",
      "evil.com:80, evil.com", "a:b:c, null", ":80, null", "host:port, null", "[::1]x, null", "'', null"})
  void theHostOfAHostHeaderIsItsNameWithoutThePort(String header, String host) {
    assertThat(LoopbackHosts.hostOfHeader(header)).isEqualTo(host);
  }
}
