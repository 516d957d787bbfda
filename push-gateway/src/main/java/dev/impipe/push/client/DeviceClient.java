package dev.impipe.push.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A device's connection to the push gateway ({@code GET /v1/ws}): receives entries, ACKs them, sends messages.
 *
 * <pre>{@code
 * try (DeviceClient.Factory devices = DeviceClient.factory()) {
 *   DeviceClient phone = devices.connect(URI.create("http://127.0.0.1:8080"), token, "phone", new Listener() {
 *     public void entry(DeviceClient c, JsonNode entry, String cursor) {
 *       show(entry);
 *       c.ack(cursor);            // cumulative: everything up to here is on the device
 *     }
 *   }).get();
 *   phone.send(Map.of("to", "bob", "body", "hi")).get();   // {"type":"sent","messageId",...}
 * }
 * }</pre>
 *
 * Entries come in order without gaps or repeats on one connection (a retry after an ACK timeout repeats one); after
 * a close (network, {@code resync}, ACK timeout) connect again: the gateway resumes after the committed cursor,
 * i.e. the last ACK, or after the cursor the device passes to {@code connect} (its own last stored one).
 * Thread-safe; listener calls come on a Vert.x event loop, so keep them short.
 */
public final class DeviceClient implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** What a device hears. */
  public interface Listener {
    /** An entry (a sync entry with {@code seq} and {@code source}) and the cursor to ACK once it is stored. */
    void entry(DeviceClient client, JsonNode entry, String cursor);

    /**
     * The backlog (everything after the committed cursor when the device connected) has been sent; live entries
     * follow. Once per connection.
     */
    default void synced(DeviceClient client, String cursor) {}

    /** The gateway asked the device to resync from its cursor (it fell behind); the socket closes next. */
    default void resync(DeviceClient client, String reason) {}

    /**
     * The socket closed: 4000 = ACK timeout (offline), 4001 = token, 4008 = resync, 4009 = frame too large,
     * 4011 = backlog unavailable, 4012 = replaced (the user's oldest socket, beyond the per-user cap: do not
     * reconnect automatically), 4013 = moved (connect to {@link DeviceClient#redirectUrl()}, or where it first
     * connected when that is null), 4029 = too many frames a second, 1001 = going away/no pong.
     */
    default void closed(DeviceClient client, int code, String reason) {}

    /**
     * Another gateway instance serves this device ({@code url}: where, null while not known); the socket closes
     * next (4013).
     */
    default void redirect(DeviceClient client, String url, String reason) {}

    /** An error frame not tied to a send (e.g. an ACK beyond what was pushed). */
    default void error(DeviceClient client, JsonNode frame) {}
  }

  /** Shares one Vert.x and one WebSocket client among many devices (the benchmark holds 10,000 in one JVM). */
  public static final class Factory implements AutoCloseable {
    private final Vertx vertx;
    private final WebSocketClient client;

    private Factory(int eventLoops) {
      this.vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(eventLoops));
      this.client = vertx.createWebSocketClient(new WebSocketClientOptions().setMaxConnections(1_000_000)
          .setConnectTimeout(10_000).setMaxFrameSize(1 << 20).setMaxMessageSize(4 << 20));
    }

    /**
     * Connects {@code device} with {@code token} to the gateway at {@code base} ({@code http://host:port}); fails
     * with {@link RefusedException} when the upgrade is refused (401 bad token, 403, 400).
     */
    public CompletableFuture<DeviceClient> connect(URI base, String token, String device, Listener listener) {
      return connect(base, token, device, null, listener);
    }

    /**
     * As {@link #connect(URI, String, String, Listener)}, the backlog starting after {@code cursor} (the cursor of the
     * last entry the device stored; null: after the committed cursor). A device that keeps its own cursor resumes
     * exactly there, also across an inbox grow; 400 when it is not a cursor.
     */
    public CompletableFuture<DeviceClient> connect(URI base, String token, String device, String cursor,
        Listener listener) {
      String path = "/v1/ws?device=" + URLEncoder.encode(device, StandardCharsets.UTF_8)
          + (cursor == null ? "" : "&cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8));
      WebSocketConnectOptions options = new WebSocketConnectOptions().setHost(base.getHost())
          .setPort(base.getPort()).setURI(path).addHeader("Authorization", "Bearer " + token);
      DeviceClient c = new DeviceClient(base, device, listener);
      return client.connect(options).map(ws -> {
        c.attach(ws);
        return c;
      }).toCompletionStage().toCompletableFuture().exceptionallyCompose(e -> {
        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
            ? e.getCause() : e;
        if (cause instanceof io.vertx.core.http.UpgradeRejectedException r) {
          return CompletableFuture.failedFuture(new RefusedException(r.getStatus(), r.getBody() == null ? ""
              : r.getBody().toString()));
        }
        return CompletableFuture.failedFuture(cause);
      });
    }

    /**
     * As {@link #connect}, following up to {@code hops} redirects that come before the backlog was sent (a gateway
     * in {@code owned} mode sends a device to the instance that reads its user's partition); completes once the
     * connection it ends on has sent the backlog ({@code synced}). The listener also hears the redirected
     * connections (a {@code redirect}, then {@code closed} 4013).
     */
    public CompletableFuture<DeviceClient> connectFollowing(URI base, String token, String device, Listener listener,
        int hops) {
      return connectFollowing(base, token, device, null, listener, hops);
    }

    /** As {@link #connectFollowing(URI, String, String, Listener, int)}, resuming after {@code cursor} (null: none). */
    public CompletableFuture<DeviceClient> connectFollowing(URI base, String token, String device, String cursor,
        Listener listener, int hops) {
      return connect(base, token, device, cursor, listener).thenCompose(c -> c.syncedFuture().handle((v, e) -> e)
          .thenCompose(failure -> {
            if (failure == null) {
              return CompletableFuture.completedFuture(c);
            }
            String url = c.redirectUrl();
            if (url != null && hops > 0) {
              return c.closedFuture().thenCompose(code -> connectFollowing(URI.create(url), token, device, cursor,
                  listener, hops - 1));
            }
            return CompletableFuture.failedFuture(failure);
          }));
    }

    @Override
    public void close() {
      try {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        // closing anyway
      }
    }
  }

  /** The gateway refused the upgrade: {@code status} is the HTTP answer (401, 403, 400). */
  public static final class RefusedException extends RuntimeException {
    private final int status;

    public RefusedException(int status, String body) {
      super("WebSocket refused: " + status + " " + body);
      this.status = status;
    }

    public int status() {
      return status;
    }
  }

  /** A factory with two event loops. */
  public static Factory factory() {
    return new Factory(2);
  }

  public static Factory factory(int eventLoops) {
    return new Factory(eventLoops);
  }

  private final URI base;
  private final String device;
  private final Listener listener;
  private final Map<String, CompletableFuture<JsonNode>> sends = new ConcurrentHashMap<>();
  private final CompletableFuture<Integer> closed = new CompletableFuture<>();
  private final CompletableFuture<Void> synced = new CompletableFuture<>();
  private volatile WebSocket socket;
  /** The socket's event loop: ACKs made while it handles one read go out as one, after it. */
  private volatile Context context;
  /** The cursor of the latest ACK not written yet (null: none waiting). */
  private final AtomicReference<String> pendingAck = new AtomicReference<>();
  private volatile String redirectUrl;

  private DeviceClient(URI base, String device, Listener listener) {
    this.base = base;
    this.device = device;
    this.listener = listener;
  }

  private void attach(WebSocket ws) {
    this.socket = ws;
    this.context = Vertx.currentContext();
    ws.textMessageHandler(this::onFrame);
    ws.closeHandler(v -> {
      int code = ws.closeStatusCode() == null ? 1006 : ws.closeStatusCode();
      String reason = ws.closeReason() == null ? "" : ws.closeReason();
      sends.values().forEach(f -> f.completeExceptionally(new IllegalStateException("connection closed")));
      listener.closed(this, code, reason);
      synced.completeExceptionally(new IllegalStateException("closed (" + code + ") before the backlog was sent"));
      closed.complete(code);
    });
    ws.exceptionHandler(e -> {});
  }

  private void onFrame(String text) {
    JsonNode frame;
    try {
      frame = JSON.readTree(text);
    } catch (java.io.IOException e) {
      return;
    }
    switch (frame.path("type").asText("")) {
      case "entry" -> listener.entry(this, frame.get("entry"), frame.path("cursor").asText());
      case "sent", "error" -> {
        CompletableFuture<JsonNode> pending = frame.hasNonNull("clientMsgId")
            ? sends.remove(frame.get("clientMsgId").asText()) : null;
        if (pending != null) {
          pending.complete(frame);
        } else if (frame.path("type").asText().equals("error")) {
          listener.error(this, frame);
        }
      }
      case "synced" -> {
        listener.synced(this, frame.path("cursor").asText());
        synced.complete(null);
      }
      case "resync" -> listener.resync(this, frame.path("reason").asText());
      case "redirect" -> {
        redirectUrl = frame.path("url").asText(null);
        listener.redirect(this, redirectUrl, frame.path("reason").asText());
      }
      default -> {
      }
    }
  }

  public String device() {
    return device;
  }

  /** The gateway this client connected to. */
  public URI base() {
    return base;
  }

  /** Where the gateway sent this device (a {@code redirect} frame), or null. */
  public String redirectUrl() {
    return redirectUrl;
  }

  /**
   * Cumulative ACK with the cursor of the last entry stored (commits the device cursor on the server). ACKs made
   * while the socket's event loop handles one read (entries that arrived together) go out as one frame with the
   * last cursor, right after that read: the gateway, the ACK wheel and the broker get one ACK per batch, not per
   * entry, and no ACK waits longer than the read it belongs to.
   */
  public void ack(String cursor) {
    Context loop = context;
    if (loop == null) {
      writeAck(cursor);
    } else if (pendingAck.getAndSet(cursor) == null) {
      loop.runOnContext(v -> {
        String last = pendingAck.getAndSet(null);
        if (last != null) {
          writeAck(last);
        }
      });
    }
  }

  private void writeAck(String cursor) {
    write(JSON.createObjectNode().put("type", "ack").put("cursor", cursor));
  }

  /** Cumulative ACK by inbox seq. */
  public void ack(long seq) {
    write(JSON.createObjectNode().put("type", "ack").put("seq", seq));
  }

  /**
   * Sends a message: {@code body} as for {@code POST /v1/messages} ({@code to} or {@code groupId}, {@code body},
   * optional {@code clientMsgId}, generated when absent); completes with the {@code sent} or {@code error} frame.
   */
  public CompletableFuture<JsonNode> send(Map<String, ?> body) {
    ObjectNode frame = JSON.valueToTree(body);
    frame.put("type", "send");
    if (!frame.hasNonNull("clientMsgId")) {
      frame.put("clientMsgId", UUID.randomUUID().toString());
    }
    CompletableFuture<JsonNode> answer = new CompletableFuture<>();
    sends.put(frame.get("clientMsgId").asText(), answer);
    write(frame);
    return answer;
  }

  /** Stops reading from the socket (a slow device: the server's writes back up). */
  public void pause() {
    socket.pause();
  }

  public void resume() {
    socket.resume();
  }

  /**
   * Completes once the gateway has sent the backlog this connection started with (the {@code synced} frame); fails
   * if the socket closes first.
   */
  public CompletableFuture<Void> syncedFuture() {
    return synced;
  }

  /** Completes with the close code once the socket closed. */
  public CompletableFuture<Integer> closedFuture() {
    return closed;
  }

  public boolean isOpen() {
    return !closed.isDone();
  }

  private void write(ObjectNode frame) {
    socket.writeTextMessage(frame.toString());
  }

  @Override
  public void close() {
    WebSocket ws = socket;
    if (ws != null && !ws.isClosed()) {
      ws.close();
    }
  }
}
