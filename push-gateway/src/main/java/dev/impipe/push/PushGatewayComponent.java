package dev.impipe.push;

import dev.impipe.edge.app.ComponentContext;
import dev.impipe.edge.app.PipelineComponent;
import dev.impipe.edge.auth.AuthConfig;
import dev.impipe.edge.auth.Principal;
import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.domain.Ids;
import dev.impipe.edge.http.HttpApi;
import dev.impipe.edge.http.HttpError;
import dev.impipe.edge.http.Request;
import dev.impipe.edge.quota.Rate;
import dev.impipe.edge.quota.RateQuota;
import dev.impipe.inbox.InboxStoreTopology;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The device edge: {@code GET /v1/ws} (WebSocket push of inbox entries, ACKs, sends), the browser client at
 * {@code /}, and in local mode the dev-token endpoint the browser client signs in with.
 */
public final class PushGatewayComponent implements PipelineComponent {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(PushGatewayComponent.class);

  public static final String NAME = "push-gateway";
  public static final String PATH = "/v1/ws";

  /** The gateway this component started (null before), for tests in this package. */
  private volatile Gateway gateway;

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int order() {
    return 400;
  }

  Gateway gateway() {
    return gateway;
  }

  @Override
  public List<ConfigTable> configTables() {
    return List.of(PushConfig.TABLE);
  }

  @Override
  public void start(ComponentContext context) {
    PushConfig config = effective(PushConfig.fromEnv(context.env()),
        context.streams(InboxStoreTopology.APP_NAME).isPresent());
    HttpApi http = context.http();
    String host = http.settings().host();
    String base = config.apiUrl().orElse("http://" + (host.equals("0.0.0.0") ? "127.0.0.1" : host) + ":"
        + http.port());
    Gateway gateway = context.closeOnShutdown(new Gateway(context.topics(), context.config().clientProperties(),
        config, new ApiClient(http.client(), base), context.metrics())).start();
    this.gateway = gateway;
    context.readiness("push-gateway-reader", gateway::readerAlive);
    OwnedReading owned = config.read() != PushConfig.ReadMode.OWNED ? null
        : context.closeOnShutdown(new OwnedReading(context.streams(InboxStoreTopology.APP_NAME).orElseThrow(),
            context.topics().inbox().name(), HostInfo.buildFromEndpoint(context.applicationServer()), gateway))
            .start();
    // Each open costs a backlog read: the socket cap bounds what a user holds, this how often they open (the same
    // per-user bucket, in bounded memory, as ingest's quotas).
    RateQuota connects = new RateQuota(Rate.of(config.connectsPerMinute(), Duration.ofMinutes(1), "minute",
        Math.max(10, config.maxSocketsPerUser())), 100_000);
    http.webSocket(PATH, request -> {
      Principal caller = request.caller();
      String device = device(caller, request);
      BacklogStart start = start(request);
      if (owned != null) {
        switch (owned.verdict(caller.userId())) {
          case REDIRECT -> {
            // Browsers follow no redirect on a WebSocket handshake: the upgrade is accepted and the device is told
            // where to go in a frame (ADR 0013).
            String url = owned.redirectUrl(caller.userId(), device);
            return socket -> {
              socket.writeTextMessage(Frames.redirect(url, "another instance serves this user"));
              socket.close(Connection.CLOSE_MOVED, "moved: reconnect to the url of the redirect frame");
            };
          }
          case RETRY -> throw new HttpError(503, "this user's inbox partition is moving between instances; retry",
              Map.of("Retry-After", "1"));
          case SERVE -> {
          }
        }
      }
      long wait = (connects.tryTake(caller.userId(), System.nanoTime()) + 999_999_999L) / 1_000_000_000L;
      if (wait > 0) {
        throw new HttpError(429, "more than " + config.connectsPerMinute() + " sockets opened a minute by this user; "
            + "retry in " + wait + " s", Map.of("Retry-After", Long.toString(wait)));
      }
      return socket -> gateway.open(caller, device, socket, start);
    });
    new StaticFiles().register(http);
    AuthConfig auth = AuthConfig.fromEnv(context.env());
    if (auth.devTokens()) {
      auth.tokenIssuer().ifPresent(issuer -> new DevTokens(issuer).register(http));
    }
  }

  /**
   * {@code config}, read mode {@code all} when {@code owned} is asked for without the inbox store in this process
   * ({@code storeHere} false: a gateway-only instance has no task placement to follow), said once as a warning.
   */
  static PushConfig effective(PushConfig config, boolean storeHere) {
    if (config.read() == PushConfig.ReadMode.OWNED && !storeHere) {
      LOG.warn("{}=owned needs the inbox store in the same process; reading every inbox partition ({}=all)",
          PushConfig.IM_PUSH_READ, PushConfig.IM_PUSH_READ);
      return config.withRead(PushConfig.ReadMode.ALL);
    }
    return config;
  }

  /** Where the backlog starts: after {@code ?cursor=} when given (400 when not a cursor), else the committed one. */
  static BacklogStart start(Request request) {
    try {
      return BacklogStart.of(request.query("cursor"));
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest(e.getMessage());
    }
  }

  /** The device: the token's {@code dev} claim, else {@code ?device=}; {@code ?user=}, when given, must be the caller. */
  static String device(Principal caller, Request request) {
    Optional<String> user = request.query("user");
    if (user.isPresent() && !caller.is(user.get())) {
      throw HttpError.forbidden("this token is for user " + caller.userId() + ", not " + user.get());
    }
    Optional<String> asked = request.query("device");
    if (caller.deviceId().isPresent()) {
      if (asked.isPresent() && !asked.get().equals(caller.deviceId().get())) {
        throw HttpError.forbidden("this token is for device " + caller.deviceId().get() + ", not " + asked.get());
      }
      return caller.deviceId().get();
    }
    String device = asked.orElseThrow(() -> HttpError.badRequest(
        "query parameter 'device' is required when the token has no dev claim"));
    if (!Ids.valid(device)) {
      throw HttpError.badRequest("device ids are 1-128 letters, digits, '.', '_', '-', '@'");
    }
    return device;
  }
}
