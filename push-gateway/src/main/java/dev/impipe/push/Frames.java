package dev.impipe.push;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.impipe.avro.InboxEntry;
import dev.impipe.inbox.http.JsonViews;
import dev.impipe.inbox.query.SyncCursor;
import dev.impipe.edge.http.Json;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the gateway writes on a socket (the frames of the device protocol) and the API paths it reads backlogs and
 * redeliveries from. Pure.
 */
final class Frames {

  static final String PONG = "{\"type\":\"pong\"}";

  private Frames() {}

  /** {@code {"type":"entry","entry":{...},"cursor":"..."}}. */
  static String entry(JsonNode entry, String cursor) {
    ObjectNode frame = Json.MAPPER.createObjectNode();
    frame.put("type", "entry");
    frame.set("entry", entry);
    frame.put("cursor", cursor);
    return frame.toString();
  }

  /** An inbox entry as the sync API gives it, with {@code "source":"inbox"} first. */
  static ObjectNode inboxEntry(JsonNode entry) {
    ObjectNode withSource = Json.MAPPER.createObjectNode();
    withSource.put("source", "inbox");
    withSource.setAll((ObjectNode) entry);
    return withSource;
  }

  /** A live entry of {@code source} ({@code inbox} or {@code #groupId}) as the sync API shows it. */
  static JsonNode live(String source, long seq, InboxEntry entry) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("source", source);
    json.putAll(JsonViews.inboxEntry(seq, entry));
    return Json.MAPPER.valueToTree(json);
  }

  /**
   * The cursor an ACK frame names: {@code {"type":"ack","seq":n}} or {@code {"type":"ack","cursor":"..."}};
   * {@link IllegalArgumentException} with the message for the device when it names none or one this gateway did not
   * send. A bare {@code seq} is read in inbox generation {@code generation} (the connection's).
   */
  static SyncCursor ackCursor(JsonNode frame, int generation) {
    if (frame.hasNonNull("cursor")) {
      try {
        return SyncCursor.decode(frame.get("cursor").asText());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("not a cursor this gateway sent", e);
      }
    }
    if (frame.path("seq").canConvertToLong() && frame.path("seq").isIntegralNumber()) {
      return SyncCursor.of(frame.get("seq").asLong(), Map.of()).inGeneration(generation);
    }
    throw new IllegalArgumentException("an ack needs \"seq\" or \"cursor\"");
  }

  /** {@code {"type":"error","clientMsgId"?,"status"?,"error"}} ({@code status} 0: none). */
  static String error(String clientMsgId, int status, String message) {
    ObjectNode frame = Json.MAPPER.createObjectNode();
    frame.put("type", "error");
    if (clientMsgId != null) {
      frame.put("clientMsgId", clientMsgId);
    }
    if (status > 0) {
      frame.put("status", status);
    }
    frame.put("error", message);
    return frame.toString();
  }

  /** {@code {"type":"resync","reason","cursor"?}}: the cursor this connection committed, if any. */
  static String resync(String reason, String committed) {
    ObjectNode frame = Json.MAPPER.createObjectNode();
    frame.put("type", "resync");
    frame.put("reason", reason);
    if (committed != null) {
      frame.put("cursor", committed);
    }
    return frame.toString();
  }

  /**
   * {@code {"type":"redirect","url"?,"reason"}}: another instance reads this device's partition; the socket closes
   * next (4013). Without {@code url} (no owner known yet) the device reconnects where it first connected.
   */
  static String redirect(String url, String reason) {
    ObjectNode frame = Json.MAPPER.createObjectNode();
    frame.put("type", "redirect");
    if (url != null) {
      frame.put("url", url);
    }
    frame.put("reason", reason);
    return frame.toString();
  }

  /**
   * Where a device of {@code device} is sent: the owner's ({@code host:port}) {@code /v1/ws} for the same device, or
   * null when {@code owner} is empty. No token in it: the client authenticates there as on any connect (a URL is
   * logged by proxies; a token must not be).
   */
  static String redirectUrl(String owner, String path, String device) {
    return owner.isEmpty() ? null : "http://" + owner + path + "?device=" + encode(device);
  }

  /** {@code {"type":"synced","cursor"}}: the backlog the connection started with is on its way. */
  static String synced(String cursor) {
    ObjectNode frame = Json.MAPPER.createObjectNode();
    frame.put("type", "synced");
    frame.put("cursor", cursor);
    return frame.toString();
  }

  /**
   * The merged sync page: {@code limit} entries after {@code after} (null: the committed cursor), once the store
   * holds inbox offset {@code minSeq} (-1: no wait) and each group timeline its offset in {@code groupMinSeqs}
   * (negative ones left out).
   */
  static String syncPath(String user, String device, int limit, String after, long minSeq,
      Map<String, Long> groupMinSeqs) {
    StringBuilder path = new StringBuilder("/v1/users/").append(encode(user)).append("/devices/")
        .append(encode(device)).append("/sync?limit=").append(limit);
    if (after != null) {
      path.append("&after=").append(after);
    }
    if (minSeq >= 0) {
      path.append("&minSeq=").append(minSeq);
    }
    StringBuilder g = new StringBuilder();
    groupMinSeqs.forEach((group, offset) -> {
      if (offset >= 0) {
        g.append(g.length() == 0 ? "" : ",").append(group).append(':').append(offset);
      }
    });
    if (g.length() > 0) {
      path.append("&groupMinSeq=").append(encode(g.toString()));
    }
    return path.toString();
  }

  /** The user's inbox entries with seqs {@code first} to {@code first + limit - 1} (a redelivery). */
  static String inboxPath(String user, long first, int limit) {
    return "/v1/users/" + encode(user) + "/inbox?after=" + (first - 1) + "&limit=" + limit;
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
