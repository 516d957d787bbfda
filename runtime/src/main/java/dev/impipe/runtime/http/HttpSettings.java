package dev.impipe.runtime.http;

import dev.impipe.runtime.config.Env;
import dev.impipe.runtime.config.InvalidConfigException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;

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
 * @param clusterKey key that authenticates instance-to-instance forwarding markers
 */
public record HttpSettings(String host, int port, int workers, int queue, int maxConnections, long maxBodyBytes,
    long headerTimeoutMs, long bodyTimeoutMs, long idleTimeoutMs, long requestTimeoutMs, byte[] clusterKey) {

  public static final String IM_HTTP_HOST = "IM_HTTP_HOST";
  public static final String IM_HTTP_WORKERS = "IM_HTTP_WORKERS";
  public static final String IM_HTTP_QUEUE = "IM_HTTP_QUEUE";
  public static final String IM_HTTP_MAX_CONNECTIONS = "IM_HTTP_MAX_CONNECTIONS";
  public static final String IM_HTTP_MAX_BODY_BYTES = "IM_HTTP_MAX_BODY_BYTES";
  public static final String IM_HTTP_HEADER_TIMEOUT = "IM_HTTP_HEADER_TIMEOUT";
  public static final String IM_HTTP_BODY_TIMEOUT = "IM_HTTP_BODY_TIMEOUT";
  public static final String IM_HTTP_IDLE_TIMEOUT = "IM_HTTP_IDLE_TIMEOUT";
  public static final String IM_HTTP_REQUEST_TIMEOUT = "IM_HTTP_REQUEST_TIMEOUT";
  public static final String IM_CLUSTER_KEY = "IM_CLUSTER_KEY";

  /** Reads the settings; {@code port} comes from the pipeline config. */
  public static HttpSettings fromEnv(Map<String, String> environment, int port) {
    Env env = new Env(environment);
    return new HttpSettings(
        env.string(IM_HTTP_HOST, "127.0.0.1"),
        port,
        env.integer(IM_HTTP_WORKERS, 8, 1, 1024),
        env.integer(IM_HTTP_QUEUE, 2_000, 1, 1_000_000),
        env.integer(IM_HTTP_MAX_CONNECTIONS, 20_000, 1, 1_000_000),
        env.longValue(IM_HTTP_MAX_BODY_BYTES, 1L << 20, 1_024, 64L << 20),
        env.durationMs(IM_HTTP_HEADER_TIMEOUT, 10_000, 100, 600_000),
        env.durationMs(IM_HTTP_BODY_TIMEOUT, 30_000, 100, 600_000),
        env.durationMs(IM_HTTP_IDLE_TIMEOUT, 60_000, 1_000, 3_600_000),
        env.durationMs(IM_HTTP_REQUEST_TIMEOUT, 30_000, 100, 600_000),
        clusterKey(env));
  }

  /** Defaults on {@code host:port}, for tests and tools. */
  public static HttpSettings defaults(String host, int port) {
    return fromEnv(Map.of(IM_HTTP_HOST, host), port);
  }

  public HttpSettings withPort(int newPort) {
    return new HttpSettings(host, newPort, workers, queue, maxConnections, maxBodyBytes, headerTimeoutMs,
        bodyTimeoutMs, idleTimeoutMs, requestTimeoutMs, clusterKey);
  }

  public HttpSettings withClusterKey(byte[] key) {
    return new HttpSettings(host, port, workers, queue, maxConnections, maxBodyBytes, headerTimeoutMs,
        bodyTimeoutMs, idleTimeoutMs, requestTimeoutMs, key.clone());
  }

  private static byte[] clusterKey(Env env) {
    Optional<String> configured = env.optional(IM_CLUSTER_KEY);
    if (configured.isEmpty()) {
      // One process alone needs no shared key; instances that forward to each other must share one (set
      // IM_CLUSTER_KEY, or share the HS256 token secret, from which the runtime derives it).
      byte[] random = new byte[32];
      new SecureRandom().nextBytes(random);
      return random;
    }
    byte[] key;
    try {
      key = Base64.getDecoder().decode(configured.get());
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigException(IM_CLUSTER_KEY + " must be base64");
    }
    if (key.length < 32) {
      throw new InvalidConfigException(IM_CLUSTER_KEY + " must decode to at least 32 bytes, got " + key.length);
    }
    return key;
  }
}
