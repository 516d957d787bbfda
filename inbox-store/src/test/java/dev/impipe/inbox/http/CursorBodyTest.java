package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The body of {@code PUT .../cursor}: {@code {"seq": n}} or {@code {"cursor": "..."}}, nothing else. */
class CursorBodyTest {

  private static SyncCursor read(String body) {
    Request put = new Request("PUT", "/v1/users/alice/devices/phone/cursor", Map.of(), Map.of(), Map.of(),
        body.getBytes(StandardCharsets.UTF_8));
    return InboxRoutes.cursorBody(put.jsonBody(InboxRoutes.CursorBody.class));
  }

  private static void refused(String body, String reason) {
    assertThatThrownBy(() -> read(body)).isInstanceOfSatisfying(HttpError.class,
        e -> assertThat(e.status()).isEqualTo(400)).hasMessageContaining(reason);
  }

  @Test
  void aSeqOrACursorASyncReturned() {
    assertThat(read("{\"seq\":5}")).isEqualTo(SyncCursor.of(5, Map.of()));
    assertThat(read("{\"seq\":9223372036854775000}").inbox()).isEqualTo(9223372036854775000L);
    SyncCursor vector = SyncCursor.of(7, Map.of("team", 3L));
    assertThat(read("{\"cursor\":\"" + vector.encode() + "\"}")).isEqualTo(vector);
    assertThat(read("{\"cursor\":null,\"seq\":2}")).isEqualTo(SyncCursor.of(2, Map.of()));
  }

  @Test
  void anythingElseIsA400NamingTheField() {
    refused("{}", "field 'seq' must be a whole number >= 0, got nothing");
    refused("{\"seq\":-1}", "field 'seq' must be a whole number >= 0, got -1");
    refused("{\"seq\":1.5}", "'seq' must be a whole number");
    refused("{\"seq\":\"5\"}", "'seq' must be a whole number");
    refused("{\"cursor\":5}", "'cursor' must be a string");
    refused("{\"cursor\":\"nonsense\"}", "field 'cursor' is not a cursor a sync returned");
    refused("{\"seq\":5,\"device\":\"phone\"}", "unknown field 'device'; allowed: cursor, seq");
  }
}
