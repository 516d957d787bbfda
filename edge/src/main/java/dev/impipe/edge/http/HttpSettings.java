package dev.impipe.edge.http;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.ConfigValues;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.runtime.config.Setting;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;

/**
 * Limits and timeouts of the HTTP server, from the environment. Every limit exists so that a busy or hostile client
 * cannot stall the others: work waits in a bounded queue (full: 503 + Retry-After), connections are capped, bodies
 * are limited in bytes, and a client that trickles its headers or body is cut off.
 *
 * @param host interface to bind
 * @param port port to bind (0: any free one)
 * @param workers threads that run request handlers (blocking store reads); waits hold none of them
 * @param queue requests waiting for a worker before new ones are answered 503
 * @param maxConnections open connections before new ones are closed at once
 * @param maxBodyBytes largest request body; larger is 413 (from Content-Length, before reading it)
 * @param headerTimeoutMs time a connection may take to send a complete request head
 * @param bodyTimeoutMs time a request may take to send its body
 * @param idleTimeoutMs an idle keep-alive connection is closed after this
 * @param requestTimeoutMs a handler that has not answered by then is answered 503
 * @param writeTimeoutMs an answer the client has not read (taken off the socket) by then closes its connection
 * @param clusterKey key that authenticates instance-to-instance forwarding markers
 */
public record HttpSettings(String host, int port, int workers, int queue, int maxConnections, long maxBodyBytes,
    long headerTimeoutMs, long bodyTimeoutMs, long idleTimeoutMs, long requestTimeoutMs, long writeTimeoutMs,
    byte[] clusterKey) {

  public static final String IM_HTTP_HOST = "IM_HTTP_HOST";
  public static final String IM_HTTP_WORKERS = "IM_HTTP_WORKERS";
  public static final String IM_HTTP_QUEUE = "IM_HTTP_QUEUE";
  public static final String IM_HTTP_MAX_CONNECTIONS = "IM_HTTP_MAX_CONNECTIONS";
  public static final String IM_HTTP_MAX_BODY_BYTES = "IM_HTTP_MAX_BODY_BYTES";
  public static final String IM_HTTP_HEADER_TIMEOUT = "IM_HTTP_HEADER_TIMEOUT";
  public static final String IM_HTTP_BODY_TIMEOUT = "IM_HTTP_BODY_TIMEOUT";
  public static final String IM_HTTP_IDLE_TIMEOUT = "IM_HTTP_IDLE_TIMEOUT";
  public static final String IM_HTTP_REQUEST_TIMEOUT = "IM_HTTP_REQUEST_TIMEOUT";
  public static final String IM_HTTP_WRITE_TIMEOUT = "IM_HTTP_WRITE_TIMEOUT";
  public static final String IM_CLUSTER_KEY = "IM_CLUSTER_KEY";

  public static final Setting<String> HOST = Setting.string(IM_HTTP_HOST, "127.0.0.1",
      "interface the HTTP API binds to (`0.0.0.0` in containers)");
  public static final Setting<Integer> WORKERS = Setting.integer(IM_HTTP_WORKERS, 8, 1, 1024,
      "threads that run handlers (store reads)");
  public static final Setting<Integer> QUEUE = Setting.integer(IM_HTTP_QUEUE, 2_000, 1, 1_000_000,
      "requests waiting for a worker; beyond it `503` + `Retry-After: 1`");
  public static final Setting<Integer> MAX_CONNECTIONS = Setting.integer(IM_HTTP_MAX_CONNECTIONS, 20_000, 1,
      1_000_000, "open connections; more are closed at once (counted from their first request)");
  public static final Setting<Long> MAX_BODY_BYTES = Setting.longValue(IM_HTTP_MAX_BODY_BYTES, 1L << 20, 1_024,
      64L << 20, "larger bodies are `413`, from `Content-Length` before a byte is read");
  public static final Setting<Duration> HEADER_TIMEOUT = Setting.duration(IM_HTTP_HEADER_TIMEOUT, "10s", "100ms",
      "10m", "a kept-alive connection must send its next request head within this");
  public static final Setting<Duration> BODY_TIMEOUT = Setting.duration(IM_HTTP_BODY_TIMEOUT, "30s", "100ms", "10m",
      "a request must have sent its whole body within this (`408`)");
  public static final Setting<Duration> IDLE_TIMEOUT = Setting.duration(IM_HTTP_IDLE_TIMEOUT, "60s", "1s", "1h",
      "a connection silent both ways is closed (never shorter than the request timeout + 1 s)");
  public static final Setting<Duration> REQUEST_TIMEOUT = Setting.duration(IM_HTTP_REQUEST_TIMEOUT, "30s", "100ms",
      "10m", "a handler that has not answered by then is answered `503`");
  public static final Setting<Duration> WRITE_TIMEOUT = Setting.duration(IM_HTTP_WRITE_TIMEOUT, "10s", "100ms",
      "10m", "an answer the client has not read within this closes its connection (a client that does not read "
          + "holds at most one answer, for at most this long)");
  public static final Setting<byte[]> CLUSTER_KEY = Setting.parsed(IM_CLUSTER_KEY, "base64", null,
      HttpSettings::decodeClusterKey, "base64 key (>= 32 bytes) that signs instance-to-instance forwarding; "
          + "instances that forward to each other must share it (or the HS256 secret)")
      .defaultDoc("derived from the HS256 secret, else random").secret();

  /** The HTTP server's settings (its port is {@code IM_HTTP_PORT} of the pipeline table). */
  public static final ConfigTable TABLE = ConfigTable.of("http", HOST, WORKERS, QUEUE, MAX_CONNECTIONS,
      MAX_BODY_BYTES, HEADER_TIMEOUT, BODY_TIMEOUT, IDLE_TIMEOUT, REQUEST_TIMEOUT, WRITE_TIMEOUT, CLUSTER_KEY);

  /** Reads the settings; {@code port} comes from the pipeline config. */
  public static HttpSettings fromEnv(Map<String, String> environment, int port) {
    ConfigValues values = TABLE.read(environment);
    return new HttpSettings(
        values.get(HOST),
        port,
        values.get(WORKERS),
        values.get(QUEUE),
        values.get(MAX_CONNECTIONS),
        values.get(MAX_BODY_BYTES),
        values.get(HEADER_TIMEOUT).toMillis(),
        values.get(BODY_TIMEOUT).toMillis(),
        values.get(IDLE_TIMEOUT).toMillis(),
        values.get(REQUEST_TIMEOUT).toMillis(),
        values.get(WRITE_TIMEOUT).toMillis(),
        values.optional(CLUSTER_KEY).orElseGet(HttpSettings::randomKey));
  }

  /** Defaults on {@code host:port}, for tests and tools. */
  public static HttpSettings defaults(String host, int port) {
    return fromEnv(Map.of(IM_HTTP_HOST, host), port);
  }

  public HttpSettings withPort(int newPort) {
    return new HttpSettings(host, newPort, workers, queue, maxConnections, maxBodyBytes, headerTimeoutMs,
        bodyTimeoutMs, idleTimeoutMs, requestTimeoutMs, writeTimeoutMs, clusterKey);
  }

  public HttpSettings withClusterKey(byte[] key) {
    return new HttpSettings(host, port, workers, queue, maxConnections, maxBodyBytes, headerTimeoutMs,
        bodyTimeoutMs, idleTimeoutMs, requestTimeoutMs, writeTimeoutMs, key.clone());
  }

  /** One process alone needs no shared key; instances that forward to each other must share one. */
  private static byte[] randomKey() {
    // Set IM_CLUSTER_KEY, or share the HS256 token secret, from which the runtime derives it.
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    return random;
  }

  private static byte[] decodeClusterKey(String configured) {
    byte[] key;
    try {
      key = Base64.getDecoder().decode(configured);
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigException(IM_CLUSTER_KEY + " must be base64");
    }
    if (key.length < 32) {
      throw new InvalidConfigException(IM_CLUSTER_KEY + " must decode to at least 32 bytes, got " + key.length);
    }
    return key;
  }
}
