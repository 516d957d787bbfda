package dev.impipe.runtime.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RequestPathsTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(nullValues = "null", value = {
      "/v1/inbox, /v1/inbox", "//v1/inbox, /v1/inbox", "///v1//inbox, /v1/inbox", "v1/inbox, /v1/inbox",
      "/, /", "'', /", "//, /", "/v1/inbox/, /v1/inbox/", "/v1/inbox//, /v1/inbox/", "/v1/a%2F..%2Fb, /v1/a%2F..%2Fb",
      "/v1/../x, null", "/./v1, null", "/v1/.., null", "/v1/..., /v1/...", "/v1/.x, /v1/.x"})
  void everySpellingOfAPathHasOneNormalForm(String raw, String normal) {
    assertThat(RequestPaths.normalise(raw)).isEqualTo(normal);
  }
}
