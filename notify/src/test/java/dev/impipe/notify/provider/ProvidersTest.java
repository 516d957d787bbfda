package dev.impipe.notify.provider;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.impipe.notify.NotifyConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProvidersTest {

  @TempDir
  Path dir;

  @Test
  void withoutCredentialsEveryProviderIsOff() {
    try (Providers providers = Providers.fromConfig(NotifyConfig.defaults(), null, Clock.systemUTC())) {
      assertThat(providers.enabled()).isEmpty();
      assertThat(providers.get("WEBPUSH")).isEmpty();
      assertThat(providers.vapidPublicKey()).isEmpty();
    }
  }

  @Test
  void eachProviderWithItsCredentialsIsOn() throws Exception {
    // Given a VAPID key file, an FCM service-account file, an APNs .p8 key and a webhook URL with its secret
    Path vapid = dir.resolve("vapid.pem");
    VapidKeys.generate(vapid);
    KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
    rsa.initialize(2048);
    Path fcm = dir.resolve("fcm.json");
    Files.writeString(fcm, new ObjectMapper().writeValueAsString(Map.of("project_id", "p", "client_email", "a@b",
        "private_key", Pem.encode(rsa.generateKeyPair().getPrivate()), "token_uri", "http://127.0.0.1:1/token")));
    KeyPairGenerator ec = KeyPairGenerator.getInstance("EC");
    ec.initialize(EcKeys.P256);
    Path p8 = dir.resolve("AuthKey_K.p8");
    Files.writeString(p8, Pem.encode(ec.generateKeyPair().getPrivate()));
    NotifyConfig config = NotifyConfig.fromEnv(Map.of("IM_NOTIFY_VAPID_KEY_FILE", vapid.toString(),
        "IM_NOTIFY_FCM_CREDENTIALS_FILE", fcm.toString(), "IM_NOTIFY_APNS_KEY_FILE", p8.toString(),
        "IM_NOTIFY_APNS_KEY_ID", "K", "IM_NOTIFY_APNS_TEAM_ID", "T", "IM_NOTIFY_APNS_TOPIC", "app",
        "IM_NOTIFY_WEBHOOK_URL", "http://127.0.0.1:1/hook", "IM_NOTIFY_WEBHOOK_SECRET", "s"));

    // When the providers are built, Then all four are on, and the VAPID public key is the file's
    VapidKeys keys = Providers.vapidKeys(config);
    try (Providers providers = Providers.fromConfig(config, keys, Clock.systemUTC())) {
      assertThat(providers.enabled()).containsExactly("WEBPUSH", "FCM", "APNS", "WEBHOOK");
      assertThat(providers.get("FCM")).get().isInstanceOf(FcmProvider.class);
      assertThat(providers.vapidPublicKey()).contains(VapidKeys.load(vapid).publicKeyBase64Url());
    }
  }

  @Test
  void aServiceAccountFileWithoutAFieldIsRefusedNamingIt() throws Exception {
    Path fcm = dir.resolve("fcm.json");
    Files.writeString(fcm, "{\"project_id\":\"p\",\"client_email\":\"a@b\",\"token_uri\":\"x\"}");
    assertThatThrownBy(() -> FcmCredentials.load(fcm)).hasMessageContaining("private_key");
  }

  @Test
  void aKeyThatIsNotPkcs8PemIsRefusedWithTheConversionCommand() {
    assertThatThrownBy(() -> Pem.privateKey("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----",
        "EC")).hasMessageContaining("openssl pkcs8 -topk8");
  }
}
