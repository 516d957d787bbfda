package dev.impipe.edge.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RequestPathsTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(nullValues = "null", value = {
      "/v1/inbox, /v1/inbox", "//v1/inbox, /v1/inbox", "///v1//inbox, /v1/inbox", "v1/inbox, /v1/inbox",
      "/, /", "'', /", "//, /", "/v1/inbox/, /v1/inbox/", "/v1/inbox//, /v1/inbox/", "/v1/a%2F..%2Fb, /v1/a%2F..%2Fb",
      "/v1/../x, null", "/./v1, null", "/v1/.., null", "/v1/..., /v1/...", "/v1/.x, /v1/.x",
      "/x/%2e%2E/v1, null", "/%2e/v1, null", "/x/.%2e, null", "/v1/%2ex, /v1/%2ex"})
  void everySpellingOfAPathHasOneNormalForm(String raw, String normal) {
    assertThat(RequestPaths.normalise(raw)).isEqualTo(normal);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({"/v1/a%2Fb, true", "/v1/m%C3%A9, true", "/v1/plain, true", "/v1/%zz, false", "/v1/a%2, false",
      "/v1/a%, false", "/v1/%2g, false", "/v1/%g2, false"})
  void aPathIsWellEncodedWhenEveryPercentStartsATwoDigitHexEscape(String path, boolean wellEncoded) {
    assertThat(RequestPaths.wellEncoded(path)).isEqualTo(wellEncoded);
  }
}
