package dev.impipe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.edge.http.Json;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/api/openapi.yaml on its own: DESIGN's names, the routes the contract lists, and schemas that can fail. */
class OpenApiDocumentTest {

  private final OpenApiDocument doc = OpenApiDocument.read(OpenApiDocument.DEFAULT);

  @Test
  void documentsTheRoutesOfTheContract() {
    assertThat(doc.root().path("openapi").asText()).startsWith("3.1");
    assertThat(doc.operations()).contains("POST /v1/messages", "GET /v1/users/{userId}/inbox",
        "GET /v1/users/{userId}/devices/{deviceId}/sync", "GET /v1/users/{userId}/devices/{deviceId}/cursor",
        "PUT /v1/users/{userId}/devices/{deviceId}/cursor", "GET /v1/conversations/{conversationId}/messages",
        "PUT /v1/groups/{groupId}/members/{userId}", "DELETE /v1/groups/{groupId}/members/{userId}",
        "POST /v1/read", "POST /v1/recall", "DELETE /v1/scheduled/{messageId}", "GET /health", "GET /metrics",
        "GET /v1/ws");
  }

  @Test
  void pathTemplatesUseDesignsParameterNames() {
    Set<String> names = new TreeSet<>();
    Matcher m = Pattern.compile("\\{([^}]+)}").matcher(String.join(" ", doc.operations()));
    while (m.find()) {
      names.add(m.group(1));
    }
    assertThat(names).isSubsetOf("userId", "deviceId", "groupId", "conversationId", "messageId", "file");
  }

  @Test
  void v1NeedsTheBearerTokenAndNothingElseDoes() {
    assertThat(doc.root().at("/components/securitySchemes/bearer/scheme").asText()).isEqualTo("bearer");
    assertThat(doc.root().at("/security/0").has("bearer")).isTrue();
    for (String op : doc.operations()) {
      String[] parts = op.split(" ", 2);
      JsonNode security = doc.root().path("paths").path(parts[1]).path(parts[0].toLowerCase(java.util.Locale.ROOT))
          .path("security");
      if (parts[1].startsWith("/v1/")) {
        assertThat(security.isMissingNode()).as("%s inherits the bearer scheme", op).isTrue();
      } else {
        assertThat(security.isArray() && security.isEmpty()).as("%s needs no token", op).isTrue();
      }
    }
  }

  @Test
  void everyLimitAndUnavailableAnswerSaysWhenToRetry() {
    for (String name : new String[] {"TooManyRequests", "Unavailable"}) {
      assertThat(doc.root().at("/components/responses/" + name + "/headers/Retry-After").isMissingNode())
          .as(name).isFalse();
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = doc.root().path("paths").fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> path = it.next();
      path.getValue().fields().forEachRemaining(op -> {
        JsonNode limited = op.getValue().path("responses").path("429");
        if (!limited.isMissingNode()) {
          assertThat(limited.path("$ref").asText()).as(path.getKey())
              .isEqualTo("#/components/responses/TooManyRequests");
        }
      });
    }
  }

  @Test
  void aBodyMissingARequiredFieldOrOfTheWrongTypeIsCaught() throws Exception {
    // Given the 202 of a send, as documented
    JsonNode good = Json.MAPPER.readTree("{\"messageId\":\"m1\",\"conversationId\":\"d:a:b\",\"scheduled\":false}");
    JsonNode missing = Json.MAPPER.readTree("{\"messageId\":\"m1\",\"scheduled\":false}");
    JsonNode wrongType = Json.MAPPER.readTree("{\"messageId\":\"m1\",\"conversationId\":\"d:a:b\",\"scheduled\":1}");

    // Then the answer that matches passes and the others do not
    assertThat(doc.checkResponse("POST", "/v1/messages", 202, good)).isEmpty();
    assertThat(doc.checkResponse("POST", "/v1/messages", 202, missing)).isNotEmpty();
    assertThat(doc.checkResponse("POST", "/v1/messages", 202, wrongType)).isNotEmpty();
    // and a sync entry of a path with variables resolves too
    JsonNode page = Json.MAPPER.readTree("{\"userId\":\"u\",\"entries\":[{\"source\":\"inbox\",\"seq\":3,"
        + "\"type\":\"MESSAGE\",\"conversationId\":\"d:u:v\",\"conversationSeq\":0,\"messageId\":\"m\",\"senderId\":"
        + "\"v\",\"body\":\"hi\",\"refMessageId\":null,\"readUpToSeq\":null,\"timestamp\":1}],\"next\":3,"
        + "\"hasMore\":false,\"cursor\":\"c\",\"largeGroups\":[]}");
    assertThat(doc.checkResponse("GET", "/v1/users/{userId}/devices/{deviceId}/sync", 200, page)).isEmpty();
    assertThat(doc.checkResponse("GET", "/v1/users/{userId}/devices/{deviceId}/sync", 200,
        Json.MAPPER.readTree("{\"userId\":\"u\",\"entries\":[{\"seq\":3}],\"next\":3,\"hasMore\":false}")))
        .isNotEmpty();
    // and a request body with an unknown field is refused, as the server refuses it
    assertThat(doc.checkRequest("POST", "/v1/messages",
        Json.MAPPER.readTree("{\"to\":\"b\",\"body\":\"x\",\"clientMsgId\":\"c\",\"colour\":\"red\"}"))).isNotEmpty();
  }

  @Test
  void anUndocumentedAnswerIsAFailureNotAPass() {
    assertThatThrownBy(() -> doc.checkResponse("POST", "/v1/messages", 418, Json.MAPPER.createObjectNode()))
        .isInstanceOf(AssertionError.class).hasMessageContaining("not documented");
  }
}
