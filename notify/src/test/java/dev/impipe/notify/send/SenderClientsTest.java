package dev.impipe.notify.send;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.PushProvider;
import dev.impipe.avro.PushRegistration;
import dev.impipe.notify.provider.TestNotifications;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class SenderClientsTest {

  @Test
  void aRemovalNamesExactlyTheRegistrationTheNotificationWasSentTo() {
    Instant now = Instant.parse("2026-01-01T00:00:00Z");
    PushRegistration r = SenderClients.removal(TestNotifications.base().setProvider("APNS").build(), "HTTP 410", now);
    assertThat(r.getUserId()).isEqualTo("bob");
    assertThat(r.getDeviceId()).isEqualTo("phone");
    assertThat(r.getRegistrationId()).isEqualTo("reg-1");
    assertThat(r.getProvider()).isEqualTo(PushProvider.APNS);
    assertThat(r.getRemoved()).isTrue();
    assertThat(r.getRemovedReason()).isEqualTo("HTTP 410");
    assertThat(r.getAt()).isEqualTo(now);
  }

  @Test
  void anUnknownProviderNameIsUnknown() {
    assertThat(SenderClients.provider("CARRIER_PIGEON")).isEqualTo(PushProvider.UNKNOWN);
    assertThat(SenderClients.provider(null)).isEqualTo(PushProvider.UNKNOWN);
    assertThat(SenderClients.provider("WEBHOOK")).isEqualTo(PushProvider.WEBHOOK);
  }
}
