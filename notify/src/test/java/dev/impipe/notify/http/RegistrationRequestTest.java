package dev.impipe.notify.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.notify.NotifyConfig;
import dev.impipe.edge.http.HttpError;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RegistrationRequestTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final NotifyConfig CFG = NotifyConfig.fromEnv(Map.of("IM_NOTIFY_PUSH_ENDPOINTS",
      "https://push.example.com/,http://127.0.0.1:18600/push/"));
  private static final Set<String> ALL = Set.of("webpush", "fcm", "apns", "webhook");
  private static final Instant NOW = Instant.parse("2026-11-26T10:00:00Z");
  // RFC 8291 Appendix A: the user agent's public key and authentication secret.
  private static final String P256DH =
      "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
  private static final String AUTH = "BTBZMqHH6r4Tts7J_aSIgg";

  private static PushRegistration parse(String body, Set<String> enabled) throws Exception {
    JsonNode node = JSON.readTree(body);
    return RegistrationRequest.parse(node, "bob", "phone", "r1", enabled, CFG::endpointAllowed, NOW);
  }

  private static String webPush(String endpoint, String p256dh, String auth) {
    return "{\"provider\":\"webpush\",\"subscription\":{\"endpoint\":\"" + endpoint + "\",\"keys\":{\"p256dh\":\""
        + p256dh + "\",\"auth\":\"" + auth + "\"}}}";
  }

  private static void assertBadRequest(String body, String reason) {
    assertThatThrownBy(() -> parse(body, ALL)).isInstanceOfSatisfying(HttpError.class, e -> {
      assertThat(e.status()).isEqualTo(400);
      assertThat(e.getMessage()).contains(reason);
    });
  }

  @Test
  void aBrowsersSubscriptionUnderAnAllowedPushServiceIsARegistration() throws Exception {
    PushRegistration r = parse(webPush("https://push.example.com/send/abc", P256DH, AUTH), ALL);

    assertThat(r.getProvider()).isEqualTo(PushProvider.WEBPUSH);
    assertThat(r.getEndpoint()).isEqualTo("https://push.example.com/send/abc");
    assertThat(r.getP256dh()).isEqualTo(P256DH);
    assertThat(r.getAuth()).isEqualTo(AUTH);
    assertThat(r.getUserId()).isEqualTo("bob");
    assertThat(r.getDeviceId()).isEqualTo("phone");
    assertThat(r.getRegistrationId()).isEqualTo("r1");
    assertThat(r.getRemoved()).isFalse();
    assertThat(r.getAt()).isEqualTo(NOW);
  }

  @Test
  void anEndpointTheServerDoesNotSendToIsRefusedWhateverItLooksLike() {
    assertBadRequest(webPush("https://example.invalid/x", P256DH, AUTH), "IM_NOTIFY_PUSH_ENDPOINTS");
    // The prefix's host followed by more host: not the push service.
    assertBadRequest(webPush("https://push.example.com.evil.net/x", P256DH, AUTH), "IM_NOTIFY_PUSH_ENDPOINTS");
    // User info makes the URL go elsewhere than it reads.
    assertBadRequest(webPush("https://push.example.com@evil.net/x", P256DH, AUTH), "plain http(s) URL");
    assertBadRequest(webPush("http://push.example.com/x", P256DH, AUTH), "IM_NOTIFY_PUSH_ENDPOINTS");
    assertBadRequest(webPush("ftp://push.example.com/x", P256DH, AUTH), "plain http(s) URL");
  }

  @Test
  void anExplicitHttpPrefixAllowsALocalPushService() throws Exception {
    assertThat(parse(webPush("http://127.0.0.1:18600/push/b-phone", P256DH, AUTH), ALL).getEndpoint())
        .isEqualTo("http://127.0.0.1:18600/push/b-phone");
  }

  @Test
  void keysMustBeAP256PointAndA16ByteSecret() {
    assertBadRequest(webPush("https://push.example.com/a", AUTH, AUTH), "uncompressed P-256 point");
    assertBadRequest(webPush("https://push.example.com/a", P256DH, P256DH), "16 bytes");
    assertBadRequest(webPush("https://push.example.com/a", "not base64!", AUTH), "not base64url");
    assertBadRequest("{\"provider\":\"webpush\"}", "PushSubscription JSON");
    assertBadRequest("{\"provider\":\"webpush\",\"subscription\":{\"endpoint\":\"https://push.example.com/a\"}}",
        "'subscription.keys'");
  }

  @Test
  void tokensOfFcmAndApnsAreChecked() throws Exception {
    PushRegistration fcm = parse("{\"provider\":\"fcm\",\"token\":\"abc:DEF_12-3\"}", ALL);
    assertThat(fcm.getProvider()).isEqualTo(PushProvider.FCM);
    assertThat(fcm.getToken()).isEqualTo("abc:DEF_12-3");
    String hex = "AB".repeat(32);
    PushRegistration apns = parse("{\"provider\":\"apns\",\"token\":\"" + hex + "\",\"sandbox\":true}", ALL);
    assertThat(apns.getToken()).isEqualTo(hex.toLowerCase(java.util.Locale.ROOT));
    assertThat(apns.getSandbox()).isTrue();

    assertBadRequest("{\"provider\":\"fcm\",\"token\":\"a b\"}", "not an FCM registration token");
    assertBadRequest("{\"provider\":\"apns\",\"token\":\"abc\"}", "not an APNs device token");
    assertBadRequest("{\"provider\":\"apns\",\"token\":\"" + hex + "\",\"sandbox\":\"yes\"}", "'sandbox'");
    assertBadRequest("{\"provider\":\"fcm\"}", "'token' must be");
  }

  @Test
  void aWebhookRegistrationCarriesNoAddress() throws Exception {
    PushRegistration r = parse("{\"provider\":\"webhook\"}", ALL);
    assertThat(r.getProvider()).isEqualTo(PushProvider.WEBHOOK);
    assertThat(r.getEndpoint()).isNull();
    assertBadRequest("{\"provider\":\"webhook\",\"token\":\"x\"}", "only for providers fcm and apns");
    assertBadRequest("{\"provider\":\"webhook\",\"url\":\"http://evil\"}", "unknown field 'url'");
  }

  @Test
  void aProviderTheServerHasNoCredentialsForIsRefused() {
    assertThatThrownBy(() -> parse("{\"provider\":\"fcm\",\"token\":\"abc\"}", Set.of("webpush")))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.getMessage()).contains("not configured"));
    assertBadRequest("{\"provider\":\"sms\"}", "'provider' must be one of");
    assertBadRequest("{}", "'provider' must be");
  }
}
