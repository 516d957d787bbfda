package dev.impipe.notify.http;

import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.inbox.http.OwnerRouter;
import dev.impipe.inbox.query.NotServableException;
import dev.impipe.notify.decide.RegistrationKeys;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import dev.impipe.edge.http.Response;
import dev.impipe.edge.quota.RateQuota;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registration endpoints (DESIGN "Notifications"). Only the user registers, reads or removes their own devices'
 * channels (403 otherwise). A registration is a record in {@code im.push-registrations}, published from any
 * instance; reads are answered from the deciding app's store by the owner of the user's partition (routed like
 * sync). {@code GET} never returns keys or tokens.
 */
public final class PushRoutes {

  private static final Logger LOG = LoggerFactory.getLogger(PushRoutes.class);

  /** What the routes need from the rest of the module. */
  public record Wiring(KafkaStreams streams, String registrationsStore, String registrationsTopic,
      OwnerRouter router, Producer<String, PushRegistration> producer, Set<String> enabledProviders,
      Optional<String> vapidPublicKey, Predicate<String> endpointAllowed, RateQuota changes, long timeoutMs,
      Clock clock) {}

  private final Wiring w;

  public PushRoutes(Wiring wiring) {
    this.w = wiring;
  }

  public void register(HttpApi api) {
    api.route("GET", "/v1/push/config", this::config);
    api.routeAsync("PUT", "/v1/users/{userId}/devices/{deviceId}/push", this::put);
    api.routeAsync("GET", "/v1/users/{userId}/devices/{deviceId}/push", this::get);
    api.routeAsync("DELETE", "/v1/users/{userId}/devices/{deviceId}/push", this::delete);
  }

  /** {@code GET /v1/push/config}: what a client needs to subscribe (the VAPID key) and which providers are on. */
  Response config(Request request) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("vapidPublicKey", w.vapidPublicKey().orElse(null));
    json.put("providers", w.enabledProviders().stream().sorted().toList());
    return Response.json(200, json);
  }

  /** {@code PUT}: 202 {@code {"userId", "deviceId", "registrationId"}} once Kafka has the registration. */
  CompletableFuture<Response> put(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    checkCaller(request, user, device, "register");
    takeQuota(user);
    PushRegistration registration = RegistrationRequest.parse(request.jsonObject(), user, device,
        UUID.randomUUID().toString(), w.enabledProviders(), w.endpointAllowed(), w.clock().instant());
    return publish(registration).thenApply(v -> {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("userId", user);
      json.put("deviceId", device);
      json.put("registrationId", registration.getRegistrationId());
      return Response.json(202, json);
    });
  }

  /** {@code GET}: the device's registration without its secrets, 404 when it has none. */
  CompletableFuture<Response> get(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    checkCaller(request, user, device, "read");
    return w.router().route("push-registration", w.registrationsStore(), user, request,
        partition -> read(partition, user, device).map(r -> Response.json(200, redacted(r)))
            .orElseThrow(() -> notFound(device)));
  }

  /** {@code DELETE}: 204 once the removal is in Kafka, 404 when the device has no registration. */
  CompletableFuture<Response> delete(Request request) {
    String user = request.path("userId");
    String device = request.path("deviceId");
    checkCaller(request, user, device, "remove");
    takeQuota(user);
    return w.router().routeAsync("push-registration", w.registrationsStore(), user, request, partition -> {
      PushRegistration current = read(partition, user, device).orElseThrow(() -> notFound(device));
      PushRegistration removal = PushRegistration.newBuilder(current).setRemoved(true)
          .setRemovedReason("removed by the user").setEndpoint(null).setP256dh(null).setAuth(null).setToken(null)
          .setAt(w.clock().instant()).build();
      return publish(removal).thenApply(v -> Response.empty(204));
    });
  }

  private Optional<PushRegistration> read(int partition, String user, String device) {
    try {
      ReadOnlyKeyValueStore<String, PushRegistration> store = w.streams().store(StoreQueryParameters
          .fromNameAndType(w.registrationsStore(), QueryableStoreTypes.<String, PushRegistration>keyValueStore())
          .withPartition(partition));
      return Optional.ofNullable(store.get(RegistrationKeys.key(user, device)));
    } catch (StreamsException | IllegalStateException e) {
      throw new NotServableException(NotServableException.Reason.NOT_OWNER, "partition " + partition + " of "
          + w.registrationsStore() + " cannot be read here now: " + e.getMessage());
    }
  }

  private CompletableFuture<Void> publish(PushRegistration registration) {
    CompletableFuture<Void> sent = new CompletableFuture<>();
    try {
      w.producer().send(new ProducerRecord<>(w.registrationsTopic(), registration.getUserId(), registration),
          (md, e) -> {
            if (e != null) {
              sent.completeExceptionally(e);
            } else {
              sent.complete(null);
            }
          });
    } catch (RuntimeException e) {
      sent.completeExceptionally(e);
    }
    return sent.orTimeout(Math.max(w.timeoutMs(), 1_000), TimeUnit.MILLISECONDS).exceptionally(e -> {
      LOG.warn("Push registration of {} not stored: {}", registration.getUserId(), e.toString());
      throw HttpError.unavailable("registration not stored, retry", 1);
    });
  }

  static Map<String, Object> redacted(PushRegistration r) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("userId", r.getUserId());
    json.put("deviceId", r.getDeviceId());
    json.put("provider", r.getProvider().name().toLowerCase(Locale.ROOT));
    json.put("registrationId", r.getRegistrationId());
    json.put("registeredAt", r.getAt().toString());
    if (r.getProvider() == PushProvider.WEBPUSH && r.getEndpoint() != null) {
      // The origin tells which push service without handing out the capability URL itself.
      java.net.URI uri = java.net.URI.create(r.getEndpoint());
      json.put("pushService", uri.getScheme() + "://" + uri.getRawAuthority());
    }
    if (r.getSandbox() != null) {
      json.put("sandbox", r.getSandbox());
    }
    return json;
  }

  private void checkCaller(Request request, String user, String device, String verb) {
    if (!request.caller().is(user)) {
      throw HttpError.forbidden("you may only " + verb + " your own devices' notification channels");
    }
    if (!Ids.valid(device)) {
      throw HttpError.badRequest("'" + device + "' is not a device id (1-128 of letters, digits, . _ - @)");
    }
  }

  private void takeQuota(String user) {
    long waitNanos = w.changes().tryTake(user, System.nanoTime());
    if (waitNanos > 0) {
      long seconds = Math.max(1, (waitNanos + 999_999_999L) / 1_000_000_000L);
      throw new HttpError(429, "more than " + w.changes().rate().text() + " registration changes by this user; "
          + "retry in " + seconds + " s", Map.of("Retry-After", Long.toString(seconds)));
    }
  }

  private static HttpError notFound(String device) {
    return new HttpError(404, "device '" + device + "' has no notification channel");
  }
}
