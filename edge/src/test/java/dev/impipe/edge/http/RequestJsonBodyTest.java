package dev.impipe.edge.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link Request#jsonBody}: a body is read into a record, and every refusal is a 400 that names the field. */
class RequestJsonBodyTest {

  record Body(String name, Long seq, Boolean flag) {}

  private static Request post(String body) {
    return new Request("POST", "/x", Map.of(), Map.of(), Map.of(), body.getBytes(StandardCharsets.UTF_8));
  }

  private static void refused(String body, String reason) {
    assertThatThrownBy(() -> post(body).jsonBody(Body.class)).isInstanceOfSatisfying(HttpError.class,
        e -> assertThat(e.status()).isEqualTo(400)).hasMessage(reason);
  }

  @Test
  void readsTheFieldsGivenAndLeavesTheOthersNull() {
    assertThat(post("{\"name\":\"a\",\"seq\":7}").jsonBody(Body.class)).isEqualTo(new Body("a", 7L, null));
    assertThat(post("{}").jsonBody(Body.class)).isEqualTo(new Body(null, null, null));
    assertThat(post("{\"name\":null,\"flag\":true}").jsonBody(Body.class)).isEqualTo(new Body(null, null, true));
  }

  @Test
  void anUnknownFieldIsRefusedWithTheAllowedOnes() {
    refused("{\"name\":\"a\",\"colour\":\"red\"}", "unknown field 'colour'; allowed: flag, name, seq");
  }

  @Test
  void aValueOfAnotherJsonTypeIsRefusedNamingTheField() {
    refused("{\"name\":7}", "'name' must be a string");
    refused("{\"name\":{\"first\":\"a\"}}", "'name' must be a string");
    refused("{\"seq\":\"7\"}", "'seq' must be a whole number");
    refused("{\"seq\":7.5}", "'seq' must be a whole number");
    refused("{\"seq\":100000000000000000000000}", "'seq' must be a whole number");
    refused("{\"flag\":\"yes\"}", "'flag' must be true or false");
  }

  @Test
  void aBodyThatIsNotAJsonObjectIsRefusedAsBefore() {
    refused("", "request body must be a JSON object");
    refused("[1]", "request body must be a JSON object");
    assertThatThrownBy(() -> post("{\"name\":").jsonBody(Body.class)).hasMessageStartingWith("malformed JSON body");
  }
}
