package dev.impipe.inbox.http;

import dev.impipe.inbox.query.NotServableException;
import dev.impipe.runtime.http.HttpError;
import dev.impipe.runtime.http.Request;
import dev.impipe.runtime.http.Response;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers a keyed request on the instance that owns the key: locally when the key's partition is an active task
 * here, otherwise forwarded over HTTP to the owner Kafka Streams names ({@code application.server}). A forwarded
 * request carries {@value #FORWARDED_HEADER} (its remaining time budget) and is never forwarded again, so
 * requests cannot loop. While no instance can answer (rebalance, restoring store, {@code minSeq} not reached yet)
 * the request is retried until its deadline, then answered 503 with {@code Retry-After}: never with a partial or
 * stale view.
 */
public final class OwnerRouter {

  /** Marks a forwarded request; the value is the time budget left, in milliseconds. */
  public static final String FORWARDED_HEADER = "X-Im-Forwarded";
  /** Seconds a client should wait after a 503. */
  public static final String RETRY_AFTER_SECONDS = "1";

  private static final Logger LOG = LoggerFactory.getLogger(OwnerRouter.class);
  private static final long FORWARD_MARGIN_MS = 250;
  private static final long MAX_BACKOFF_MS = 200;

  /** Answers for a partition of this instance, or throws {@link NotServableException}. */
  @FunctionalInterface
  public interface LocalAnswer {
    Response answer(int partition);
  }

  private final KafkaStreams streams;
  private final HostInfo self;
  private final long timeoutMs;
  private final HttpClient client;
  private final MeterRegistry metrics;
  private final Serializer<String> keySerializer = new StringSerializer();

  /**
   * @param self this instance's {@code application.server}, to avoid forwarding to itself (null if unknown: a
   *     self-forward then costs one hop and stops there)
   */
  public OwnerRouter(KafkaStreams streams, HostInfo self, long timeoutMs, MeterRegistry metrics) {
    this.streams = streams;
    this.self = self;
    this.timeoutMs = timeoutMs;
    this.metrics = metrics;
    this.client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1))
        .version(HttpClient.Version.HTTP_1_1).build();
  }

  /**
   * Answers {@code request} for {@code key} of {@code store}.
   *
   * @param fallback answer when no owner could be reached in time (null: 503)
   */
  public Response route(String route, String store, String key, Request request, LocalAnswer local,
      Supplier<Response> fallback) {
    long start = System.nanoTime();
    boolean forwarded = request.headers().containsKey(FORWARDED_HEADER.toLowerCase(java.util.Locale.ROOT));
    long deadline = start + TimeUnit.MILLISECONDS.toNanos(budgetMs(request, forwarded));
    String served = "unavailable";
    try {
      long backoffMs = 5;
      String why;
      String ownerSaid = null;
      while (true) {
        KeyQueryMetadata owner = metadata(store, key);
        if (owner == null) {
          why = "no instance owns the partition of '" + key + "' right now (rebalancing)";
        } else {
          try {
            Response answer = local.answer(owner.partition());
            served = "local";
            return answer;
          } catch (NotServableException e) {
            why = e.getMessage();
            if (e.reason() == NotServableException.Reason.NOT_OWNER && !forwarded
                && !owner.activeHost().equals(self)) {
              Response remote = forward(owner.activeHost(), request, deadline);
              if (remote != null && remote.status() != 503) {
                served = "forwarded";
                return remote;
              }
              if (remote != null) {
                ownerSaid = "owner " + owner.activeHost() + " answered: "
                    + new String(remote.body(), StandardCharsets.UTF_8);
              }
              // A last attempt cut short by the deadline must not hide what the owner said before.
              why = remote == null && ownerSaid != null ? ownerSaid
                  : remote == null ? "owner " + owner.activeHost() + " did not answer" : ownerSaid;
            }
          }
        }
        long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (leftMs <= 0) {
          if (fallback != null) {
            served = "fallback";
            return fallback.get();
          }
          throw new HttpError(503, "not available, retry: " + why, Map.of("Retry-After", RETRY_AFTER_SECONDS));
        }
        sleep(Math.min(backoffMs, leftMs));
        backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
      }
    } finally {
      Timer.builder("im.inbox.requests").description("Inbox store queries by route and where they were answered")
          .tag("route", route).tag("served", served).register(metrics)
          .record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }
  }

  private long budgetMs(Request request, boolean forwarded) {
    if (!forwarded) {
      return timeoutMs;
    }
    try {
      long left = Long.parseLong(request.headers().get(FORWARDED_HEADER.toLowerCase(java.util.Locale.ROOT)));
      return Math.max(0, Math.min(timeoutMs, left));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private KeyQueryMetadata metadata(String store, String key) {
    try {
      KeyQueryMetadata meta = streams.queryMetadataForKey(store, key, keySerializer);
      return meta == null || meta.equals(KeyQueryMetadata.NOT_AVAILABLE) || meta.activeHost().port() < 0
          ? null : meta;
    } catch (StreamsException | IllegalStateException e) {
      return null;
    }
  }

  /** The owner's answer, or null when it could not be reached in time. */
  private Response forward(HostInfo owner, Request request, long deadline) {
    long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    if (leftMs <= 0) {
      return null;
    }
    URI uri = URI.create("http://" + owner.host() + ":" + owner.port() + request.path() + query(request));
    HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
        .timeout(Duration.ofMillis(leftMs))
        // The owner gets less time than we have (a quarter less, at least FORWARD_MARGIN_MS), so its own answer, a
        // 503 with its reason included, reaches us before our deadline even on a busy machine.
        .header(FORWARDED_HEADER, Long.toString(Math.max(0, leftMs - Math.max(FORWARD_MARGIN_MS, leftMs / 4))))
        .method(request.method(), request.body().length == 0 ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(request.body()));
    String contentType = request.headers().get("content-type");
    if (contentType != null) {
      builder.header("Content-Type", contentType);
    }
    try {
      HttpResponse<byte[]> answer = client.send(builder.build(), HttpResponse.BodyHandlers.ofByteArray());
      Response response = new Response(answer.statusCode(),
          answer.headers().firstValue("content-type").orElse("application/json"), answer.body(), Map.of());
      return answer.headers().firstValue("retry-after").map(v -> response.withHeader("Retry-After", v))
          .orElse(response);
    } catch (IOException e) {
      LOG.debug("Forwarding {} {} to {} failed: {}", request.method(), request.path(), owner, e.toString());
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HttpError(503, "interrupted", Map.of("Retry-After", RETRY_AFTER_SECONDS));
    }
  }

  private static String query(Request request) {
    if (request.query().isEmpty()) {
      return "";
    }
    StringJoiner joiner = new StringJoiner("&", "?", "");
    request.query().forEach((k, v) -> joiner.add(URLEncoder.encode(k, StandardCharsets.UTF_8) + "="
        + URLEncoder.encode(v, StandardCharsets.UTF_8)));
    return joiner.toString();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HttpError(503, "interrupted", Map.of("Retry-After", RETRY_AFTER_SECONDS));
    }
  }
}
