package dev.impipe.edge.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.edge.auth.Principal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class ForwardMarkerTest {

  private static final byte[] KEY = "a cluster key of thirty-two bytes!".getBytes(StandardCharsets.US_ASCII);
  private static final long NOW = 1_700_000_000_000L;
  private static final byte[] BODY = "{\"seq\":7}".getBytes(StandardCharsets.UTF_8);

  private final ForwardMarker marker = new ForwardMarker(KEY);

  @Test
  void aMarkerVerifiesForExactlyTheRequestItWasSignedForOnce() {
    // Given a marker for alice's PUT of a cursor with this body
    String m = marker.sign("PUT", "/v1/users/alice/devices/p/cursor?x=1", "Bearer A", BODY, 2_000, NOW);

    // Then another method, path, query, caller or body does not verify
    assertThat(marker.verify(m, "GET", "/v1/users/alice/devices/p/cursor?x=1", "Bearer A", BODY, NOW)).isEmpty();
    assertThat(marker.verify(m, "PUT", "/v1/users/bob/devices/p/cursor?x=1", "Bearer A", BODY, NOW)).isEmpty();
    assertThat(marker.verify(m, "PUT", "/v1/users/alice/devices/p/cursor?x=2", "Bearer A", BODY, NOW)).isEmpty();
    assertThat(marker.verify(m, "PUT", "/v1/users/alice/devices/p/cursor?x=1", "Bearer B", BODY, NOW)).isEmpty();
    assertThat(marker.verify(m, "PUT", "/v1/users/alice/devices/p/cursor?x=1", "Bearer A",
        "{\"seq\":9}".getBytes(StandardCharsets.UTF_8), NOW)).isEmpty();

    // And the request itself verifies with its budget, once: a replay is an unmarked request
    assertThat(marker.verify(m, "PUT", "/v1/users/alice/devices/p/cursor?x=1", "Bearer A", BODY, NOW))
        .isEqualTo(OptionalLong.of(2_000));
    assertThat(marker.verify(m, "PUT", "/v1/users/alice/devices/p/cursor?x=1", "Bearer A", BODY, NOW)).isEmpty();
  }

  @Test
  void aMarkerExpiresWithItsBudgetPlusAShortSlackAndAnotherKeysMarkerNeverVerifies() {
    String m = marker.sign("GET", "/v1/x", null, new byte[0], 1_000, NOW);
    // 1 s budget + 5 s slack: 6.001 s later it is over
    assertThat(marker.verify(m, "GET", "/v1/x", null, new byte[0], NOW + 6_001)).isEmpty();

    String foreign = new ForwardMarker("another key of at least 32 bytes..".getBytes(StandardCharsets.US_ASCII))
        .sign("GET", "/v1/x", null, new byte[0], 1_000, NOW);
    assertThat(marker.verify(foreign, "GET", "/v1/x", null, new byte[0], NOW)).isEmpty();
    assertThat(marker.verify("v1." + (NOW + 9_000) + ".5000.abc", "GET", "/v1/x", null, new byte[0], NOW))
        .as("the old unbound format").isEmpty();
    assertThat(marker.verify("garbage", "GET", "/v1/x", null, new byte[0], NOW)).isEmpty();
  }

  @Test
  void aForwardedRequestCarriesItsCallersTokenAndTheMarkerIsBoundToIt() {
    Principal alice = new Principal("alice", Optional.empty(), Instant.ofEpochMilli(NOW + 60_000), "tok-a");
    Request request = new Request("GET", "/v1/users/alice/inbox", Map.of(), Map.of(), Map.of(), new byte[0],
        "/v1/users/alice/inbox?limit=5", alice, OptionalLong.empty());
    assertThat(ForwardMarker.forwardedAuthorization(request)).isEqualTo("Bearer tok-a");

    String m = marker.sign(request, 3_000, NOW);

    assertThat(marker.verify(m, "GET", "/v1/users/alice/inbox?limit=5", "Bearer tok-b", new byte[0], NOW)).isEmpty();
    assertThat(marker.verify(m, "GET", "/v1/users/alice/inbox?limit=5", "Bearer tok-a", new byte[0], NOW))
        .isEqualTo(OptionalLong.of(3_000));
  }
}
