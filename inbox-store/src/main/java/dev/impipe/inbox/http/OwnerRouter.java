package dev.impipe.inbox.http;

import dev.impipe.inbox.query.NotServableException;
import dev.impipe.runtime.http.ForwardMarker;
import dev.impipe.runtime.http.HttpApi;
import dev.impipe.runtime.http.HttpError;
import dev.impipe.runtime.http.Json;
import dev.impipe.runtime.http.Request;
import dev.impipe.runtime.http.Response;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * request carries the caller's own token (the owner verifies it again and applies the same rules) and a signed
 * {@link ForwardMarker} with its remaining time budget; a request with a valid marker is never forwarded again, so
 * requests cannot loop. While no instance can answer (rebalance, restoring store, {@code minSeq} not reached yet)
 * the request is retried until its deadline, then answered 503 with {@code Retry-After}: never with a partial or
 * stale view. Waiting between attempts holds no thread (a timer schedules the next attempt).
 */
public final class OwnerRouter {

  /** Seconds a client should wait after a 503. */
  public static final String RETRY_AFTER_SECONDS = "1";

  private static final Logger LOG = LoggerFactory.getLogger(OwnerRouter.class);
  private static final long FORWARD_MARGIN_MS = 250;
  private static final long MAX_BACKOFF_MS = 200;
  private static final long MIN_BACKOFF_MS = 5;
  /**
   * A store that is behind (minSeq) catches up at the pace of its input, not of a rebalance: such waits back off
   * from 25 ms to 500 ms, so hundreds of pending waits cost a few hundred cheap checks a second, not thousands.
   */
  private static final long BEHIND_MIN_BACKOFF_MS = 25;
  private static final long BEHIND_MAX_BACKOFF_MS = 500;
  /** Marks (inside this process only) an answer that came from the owner instance. */
  private static final String SERVED_BY_OWNER = "X-Im-Served-By-Owner";

  /** Answers for a partition of this instance, or throws {@link NotServableException}. */
  @FunctionalInterface
  public interface LocalAnswer {
    Response answer(int partition);
  }

  private final KafkaStreams streams;
  private final HostInfo self;
  private final long timeoutMs;
  private final HttpApi http;
  private final MeterRegistry metrics;
  private final Serializer<String> keySerializer = new StringSerializer();

  /**
   * @param self this instance's {@code application.server}, to avoid forwarding to itself (null if unknown: a
   *     self-forward then costs one hop and stops there)
   * @param http the server whose workers, timers, client and cluster key the router uses
   */
  public OwnerRouter(KafkaStreams streams, HostInfo self, long timeoutMs, HttpApi http, MeterRegistry metrics) {
    this.streams = streams;
    this.self = self;
    this.timeoutMs = timeoutMs;
    this.http = http;
    this.metrics = metrics;
    io.micrometer.core.instrument.Gauge
        .builder("im.inbox.pending", pending, java.util.concurrent.atomic.AtomicLong::get)
        .description("Inbox store requests waiting (minSeq, rebalance) for an answer").register(metrics);
  }

  private final java.util.concurrent.atomic.AtomicLong pending = new java.util.concurrent.atomic.AtomicLong();

  /** The time a request may take here: the configured timeout, or what a forwarding instance left it. */
  public long budgetMs(Request request) {
    return request.forwardedBudgetMs().isPresent()
        ? Math.max(0, Math.min(timeoutMs, request.forwardedBudgetMs().getAsLong())) : timeoutMs;
  }

  /** Answers {@code request} for {@code key} of {@code store}, asynchronously (see the class comment). */
  public CompletableFuture<Response> route(String route, String store, String key, Request request,
      LocalAnswer local) {
    long start = System.nanoTime();
    long deadline = start + TimeUnit.MILLISECONDS.toNanos(budgetMs(request));
    CompletableFuture<Response> out = new CompletableFuture<>();
    pending.incrementAndGet();
    out.whenComplete((r, e) -> pending.decrementAndGet());
    attempt(store, key, request, local, deadline, MIN_BACKOFF_MS, null, out);
    return out.whenComplete((r, e) -> Timer.builder("im.inbox.requests")
        .description("Inbox store queries by route and where they were answered")
        .tag("route", route).tag("served", e != null ? "unavailable" : served(r)).register(metrics)
        .record(System.nanoTime() - start, TimeUnit.NANOSECONDS))
        .thenApply(r -> r.withoutHeader(SERVED_BY_OWNER));
  }

  private static String served(Response r) {
    return r.headers().containsKey(SERVED_BY_OWNER) ? "forwarded" : r.status() == 503 ? "unavailable" : "local";
  }

  /**
   * The same, for a caller that must have the answer in hand (a sub-read inside a merged sync): runs the attempts
   * on the calling thread, which it holds for at most the request's budget.
   */
  public Response routeNow(String route, String store, String key, Request request, LocalAnswer local) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budgetMs(request));
    long backoffMs = 5;
    String why;
    while (true) {
      KeyQueryMetadata owner = metadata(store, key);
      if (owner == null) {
        why = "no instance owns the partition of '" + key + "' right now (rebalancing)";
      } else {
        try {
          return local.answer(owner.partition());
        } catch (NotServableException e) {
          why = e.getMessage();
          if (e.reason() == NotServableException.Reason.NOT_OWNER && !request.forwarded()
              && !owner.activeHost().equals(self)) {
            try {
              Response remote = forward(owner.activeHost(), request, deadline)
                  .get(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())),
                      TimeUnit.MILLISECONDS);
              if (remote != null && remote.status() != 503) {
                return remote;
              }
              why = "the owner could not answer";
            } catch (ExecutionException | TimeoutException e2) {
              why = "the owner did not answer";
            } catch (InterruptedException e2) {
              Thread.currentThread().interrupt();
              throw HttpError.unavailable("interrupted", 1);
            }
          }
        }
      }
      long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (leftMs <= 0) {
        throw unavailable(why);
      }
      try {
        Thread.sleep(Math.min(backoffMs, leftMs)); // bounded backoff between attempts of a sub-read
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw HttpError.unavailable("interrupted", 1);
      }
      backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
    }
  }

  private void attempt(String store, String key, Request request, LocalAnswer local, long deadline, long backoffMs,
      String lastWhy, CompletableFuture<Response> out) {
    String why;
    boolean behind = false;
    try {
      KeyQueryMetadata owner = metadata(store, key);
      if (owner == null) {
        why = "no instance owns the partition of '" + key + "' right now (rebalancing)";
      } else {
        try {
          out.complete(local.answer(owner.partition()));
          return;
        } catch (NotServableException e) {
          why = e.getMessage();
          behind = e.reason() == NotServableException.Reason.BEHIND;
          if (e.reason() == NotServableException.Reason.NOT_OWNER && !request.forwarded()
              && !owner.activeHost().equals(self)) {
            forward(owner.activeHost(), request, deadline).whenComplete((remote, failure) -> {
              if (remote != null && remote.status() != 503) {
                out.complete(remote.withHeader(SERVED_BY_OWNER, "true"));
              } else {
                // Keep what the owner said last (its own 503 reason): a last attempt cut short by the deadline
                // must not hide it.
                String ownerWhy = remote != null ? "owner: " + errorText(remote)
                    : lastWhy != null && lastWhy.startsWith("owner: ") ? lastWhy
                    : "the owner of the partition did not answer";
                retryLater(store, key, request, local, deadline, backoffMs, ownerWhy, out);
              }
            });
            return;
          }
        }
      }
    } catch (RuntimeException e) {
      out.completeExceptionally(e);
      return;
    }
    if (behind) {
      retryLater(store, key, request, local, deadline, Math.max(backoffMs, BEHIND_MIN_BACKOFF_MS), why, out,
          BEHIND_MAX_BACKOFF_MS);
    } else {
      retryLater(store, key, request, local, deadline, backoffMs, why, out);
    }
  }

  private static String errorText(Response response) {
    try {
      return Json.MAPPER.readTree(response.body()).path("error").asText("not available");
    } catch (java.io.IOException e) {
      return "not available";
    }
  }

  private void retryLater(String store, String key, Request request, LocalAnswer local, long deadline,
      long backoffMs, String why, CompletableFuture<Response> out) {
    retryLater(store, key, request, local, deadline, backoffMs, why, out, MAX_BACKOFF_MS);
  }

  private void retryLater(String store, String key, Request request, LocalAnswer local, long deadline,
      long backoffMs, String why, CompletableFuture<Response> out, long maxBackoffMs) {
    long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    if (leftMs <= 0) {
      out.completeExceptionally(unavailable(why));
      return;
    }
    http.after(Math.min(backoffMs, leftMs)).thenRun(() -> http.onWorker(() -> {
      attempt(store, key, request, local, deadline, Math.min(maxBackoffMs, backoffMs * 2), why, out);
      return CompletableFuture.completedFuture(null);
    }).whenComplete((v, e) -> {
      if (e != null) {
        out.completeExceptionally(e);
      }
    }));
  }

  private static HttpError unavailable(String why) {
    return new HttpError(503, "not available, retry: " + why, Map.of("Retry-After", RETRY_AFTER_SECONDS));
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

  /** Whether a forwarded answer can be passed on: anything but a 200 with an empty body (every route has one). */
  static boolean isAnswer(int status, int bodyLength) {
    return status != 200 || bodyLength > 0;
  }

  /** The owner's answer, or null when it could not be reached in time. Never throws. */
  private CompletableFuture<Response> forward(HostInfo owner, Request request, long deadline) {
    long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    if (leftMs <= 0) {
      return CompletableFuture.completedFuture(null);
    }
    // The owner gets less time than we have (a quarter less, at least FORWARD_MARGIN_MS), so its own answer, a
    // 503 included, reaches us before our deadline even on a busy machine.
    long ownerBudget = Math.max(0, leftMs - Math.max(FORWARD_MARGIN_MS, leftMs / 4));
    RequestOptions options = new RequestOptions()
        .setMethod(HttpMethod.valueOf(request.method()))
        .setHost(owner.host())
        .setPort(owner.port())
        .setURI(request.rawUri())
        .setConnectTimeout(Math.min(1_000, leftMs))
        .setIdleTimeout(leftMs)
        .putHeader(ForwardMarker.HEADER, http.marker().sign(request, ownerBudget, System.currentTimeMillis()));
    String authorization = request.headers().get("authorization");
    if (authorization == null && request.principal() != null) {
      authorization = "Bearer " + request.principal().token();
    }
    if (authorization != null) {
      options.putHeader("Authorization", authorization);
    }
    String contentType = request.headers().get("content-type");
    if (contentType != null) {
      options.putHeader("Content-Type", contentType);
    }
    CompletableFuture<Response> out = new CompletableFuture<>();
    http.client().request(options)
        .compose(req -> req.send(Buffer.buffer(request.body())))
        .compose(resp -> resp.body().map(body -> {
          if (!isAnswer(resp.statusCode(), body.length())) {
            // Every forwarded route answers 200 with a JSON body: a 200 without one is not an answer (seen once in
            // a broker-kill fault test, cause not found yet). Retried like an owner that did not answer; said
            // loudly so the next occurrence can be traced.
            LOG.warn("Forwarding {} {} to {}: 200 without a body (headers {}); retrying", request.method(),
                request.path(), owner, resp.headers().entries());
            throw new IllegalStateException("200 without a body");
          }
          Response r = new Response(resp.statusCode(), resp.getHeader("Content-Type") == null ? "application/json"
              : resp.getHeader("Content-Type"), body.getBytes(), Map.of());
          String retry = resp.getHeader("Retry-After");
          return retry == null ? r : r.withHeader("Retry-After", retry);
        }))
        .onComplete(result -> {
          if (result.succeeded()) {
            out.complete(result.result());
          } else {
            LOG.debug("Forwarding {} {} to {} failed: {}", request.method(), request.path(), owner,
                result.cause().toString());
            out.complete(null);
          }
        });
    return out.completeOnTimeout(null, leftMs, TimeUnit.MILLISECONDS);
  }
}
