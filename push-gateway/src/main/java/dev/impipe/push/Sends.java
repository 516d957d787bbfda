package dev.impipe.push;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.impipe.edge.http.Json;
import java.nio.charset.StandardCharsets;

/** The {@code send} frame of a device: sent through the HTTP API as the device's user, answered on the socket. */
final class Sends {

  private Sends() {}

  /** {@code {"type":"send", ...}}: the body of {@code POST /v1/messages}, sent as the device's user. */
  static void send(ApiClient api, Connection c, ObjectNode frame) {
    frame.remove("type");
    String clientMsgId = frame.path("clientMsgId").asText(null);
    if (!c.limiter.startSend()) {
      c.reply(Frames.error(clientMsgId, 429, "more than " + c.limiter.limits().maxInflightSends()
          + " sends waiting for their answer: retry with the same clientMsgId once one is answered"));
      return;
    }
    if (!frame.has("senderDeviceId")) {
      frame.put("senderDeviceId", c.device);
    }
    api.post("/v1/messages", c.principal.token(), frame.toString().getBytes(StandardCharsets.UTF_8))
        .whenComplete((reply, e) -> {
          c.limiter.endSend();
          if (e != null) {
            c.error(clientMsgId, "not sent, retry with the same clientMsgId");
          } else if (reply.status() / 100 != 2) {
            c.reply(Frames.error(clientMsgId, reply.status(), reply.error()));
          } else {
            ObjectNode sent = Json.MAPPER.createObjectNode();
            sent.put("type", "sent");
            sent.put("clientMsgId", clientMsgId);
            if (reply.body() instanceof ObjectNode body) {
              sent.setAll(body);
            }
            c.reply(sent.toString());
          }
        });
  }
}
