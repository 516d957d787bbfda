package dev.impipe.notify.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.edge.http.HttpError;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Instant;
import java.util.Base64;
import java.util.Iterator;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * The body of {@code PUT /v1/users/{userId}/devices/{deviceId}/push}, checked field by field (a pure function: 400
 * with the reason, never a request to anything). A Web Push endpoint must lie under one of the configured prefixes:
 * the server never sends to an address a client chose.
 */
public final class RegistrationRequest {

  /** Longest endpoint URL accepted (the browsers' push services use a few hundred characters). */
  static final int MAX_ENDPOINT_CHARS = 2_048;
  /** Longest FCM registration token accepted (they are ~160-200 characters today). */
  static final int MAX_TOKEN_CHARS = 4_096;
  private static final Pattern FCM_TOKEN = Pattern.compile("[A-Za-z0-9:_\\-]+");
  /** APNs device tokens are 32 bytes today, in hex; a longer one is allowed for the future, not unbounded. */
  private static final Pattern APNS_TOKEN = Pattern.compile("([0-9a-fA-F]{2}){32,100}");
  private static final Set<String> FIELDS = Set.of("provider", "subscription", "token", "sandbox");

  private RegistrationRequest() {}

  /**
   * The registration {@code body} asks for.
   *
   * @param enabled the providers this server sends with (lower case: {@code webpush}, {@code fcm}, ...)
   * @param endpointAllowed whether a Web Push endpoint lies under {@code IM_NOTIFY_PUSH_ENDPOINTS}
   * @throws HttpError 400 naming what is wrong
   */
  public static PushRegistration parse(JsonNode body, String user, String device, String registrationId,
      Set<String> enabled, Predicate<String> endpointAllowed, Instant now) {
    for (Iterator<String> names = body.fieldNames(); names.hasNext();) {
      String name = names.next();
      if (!FIELDS.contains(name)) {
        throw HttpError.badRequest("unknown field '" + name + "'; allowed: provider, sandbox, subscription, token");
      }
    }
    String provider = text(body, "provider", "one of webpush, fcm, apns, webhook");
    PushProvider kind = switch (provider) {
      case "webpush" -> PushProvider.WEBPUSH;
      case "fcm" -> PushProvider.FCM;
      case "apns" -> PushProvider.APNS;
      case "webhook" -> PushProvider.WEBHOOK;
      default -> throw HttpError.badRequest("'provider' must be one of webpush, fcm, apns, webhook");
    };
    if (!enabled.contains(provider)) {
      throw HttpError.badRequest("provider '" + provider + "' is not configured on this server (GET /v1/push/config "
          + "lists the ones that are)");
    }
    PushRegistration.Builder r = PushRegistration.newBuilder().setUserId(user).setDeviceId(device)
        .setRegistrationId(registrationId).setProvider(kind).setRemoved(false).setAt(now);
    switch (kind) {
      case WEBPUSH -> webPush(body, r, endpointAllowed);
      case FCM -> {
        String token = text(body, "token", "the FCM registration token");
        if (token.length() > MAX_TOKEN_CHARS || !FCM_TOKEN.matcher(token).matches()) {
          throw HttpError.badRequest("'token' is not an FCM registration token");
        }
        r.setToken(token);
      }
      case APNS -> {
        String token = text(body, "token", "the APNs device token (hex)");
        if (!APNS_TOKEN.matcher(token).matches()) {
          throw HttpError.badRequest("'token' is not an APNs device token (hex, 32 bytes or more)");
        }
        r.setToken(token.toLowerCase(Locale.ROOT));
        JsonNode sandbox = body.get("sandbox");
        if (sandbox != null && !sandbox.isNull()) {
          if (!sandbox.isBoolean()) {
            throw HttpError.badRequest("'sandbox' must be true or false");
          }
          r.setSandbox(sandbox.booleanValue());
        }
      }
      default -> {
        // WEBHOOK: where it goes is the deployment's configuration, never the client's.
      }
    }
    if (kind != PushProvider.WEBPUSH && body.has("subscription")) {
      throw HttpError.badRequest("'subscription' is only for provider webpush");
    }
    if ((kind == PushProvider.WEBPUSH || kind == PushProvider.WEBHOOK) && body.has("token")) {
      throw HttpError.badRequest("'token' is only for providers fcm and apns");
    }
    return r.build();
  }

  private static void webPush(JsonNode body, PushRegistration.Builder r, Predicate<String> endpointAllowed) {
    JsonNode sub = body.get("subscription");
    if (sub == null || !sub.isObject()) {
      throw HttpError.badRequest("'subscription' must be the browser's PushSubscription JSON: {\"endpoint\", "
          + "\"keys\": {\"p256dh\", \"auth\"}}");
    }
    String endpoint = text(sub, "endpoint", "the push service URL of the subscription");
    if (endpoint.length() > MAX_ENDPOINT_CHARS) {
      throw HttpError.badRequest("'subscription.endpoint' is longer than " + MAX_ENDPOINT_CHARS + " characters");
    }
    URI uri;
    try {
      uri = new URI(endpoint);
    } catch (URISyntaxException e) {
      throw HttpError.badRequest("'subscription.endpoint' is not a URL");
    }
    // The prefix check is on the text; a URL that parses to another host than it reads (user info, a
    // backslash, an odd scheme) is refused before it is compared.
    if (uri.getRawUserInfo() != null || uri.getHost() == null || endpoint.indexOf('\\') >= 0
        || !("https".equals(uri.getScheme()) || "http".equals(uri.getScheme()))) {
      throw HttpError.badRequest("'subscription.endpoint' must be a plain http(s) URL");
    }
    if (!endpointAllowed.test(endpoint)) {
      throw HttpError.badRequest("'subscription.endpoint' is not under a push service this server sends to "
          + "(IM_NOTIFY_PUSH_ENDPOINTS)");
    }
    JsonNode keys = sub.get("keys");
    if (keys == null || !keys.isObject()) {
      throw HttpError.badRequest("'subscription.keys' must be {\"p256dh\", \"auth\"}");
    }
    String p256dh = text(keys, "p256dh", "the subscription's P-256 public key (base64url)");
    byte[] point = base64Url(p256dh, "subscription.keys.p256dh");
    if (point.length != 65 || point[0] != 0x04) {
      throw HttpError.badRequest("'subscription.keys.p256dh' must be an uncompressed P-256 point (65 bytes)");
    }
    String auth = text(keys, "auth", "the subscription's authentication secret (base64url)");
    if (base64Url(auth, "subscription.keys.auth").length != 16) {
      throw HttpError.badRequest("'subscription.keys.auth' must be 16 bytes");
    }
    r.setEndpoint(endpoint).setP256dh(p256dh).setAuth(auth);
  }

  private static byte[] base64Url(String value, String field) {
    try {
      return Base64.getUrlDecoder().decode(value.endsWith("=") ? value.replace("=", "") : value);
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest("'" + field + "' is not base64url");
    }
  }

  private static String text(JsonNode node, String field, String what) {
    JsonNode v = node.get(field);
    if (v == null || !v.isTextual() || v.asText().isEmpty()) {
      throw HttpError.badRequest("'" + field + "' must be " + what);
    }
    return v.asText();
  }
}
