package dev.impipe.inbox.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.edge.auth.Principal;
import dev.impipe.edge.http.HttpError;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A device id in a route is a valid id: {@code #} (which the cursor store uses for a device's position in a large
 * group) is refused with 400, so a cursor PUT cannot name a large-group position under a device id and skip the
 * large-group check.
 */
class DeviceIdTest {

  private static Principal user(String id) {
    return new Principal(id, Optional.empty(), Instant.now().plusSeconds(60), "token-of-" + id);
  }

  @Test
  void aDeviceIdWithHashOrOtherInvalidCharactersIs400() {
    Principal alice = user("alice");
    for (String device : new String[] {"phone#team", "#team", "", "a b", "x".repeat(129)}) {
      assertThatThrownBy(() -> InboxRoutes.requireDevice(alice, "alice", device))
          .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(400))
          .hasMessageContaining("device id");
    }
    assertThatCode(() -> InboxRoutes.requireDevice(alice, "alice", "phone-1.a_b@c")).doesNotThrowAnyException();
  }

  @Test
  void theCallerIsCheckedFirst() {
    assertThatThrownBy(() -> InboxRoutes.requireDevice(user("mallory"), "alice", "phone#team"))
        .isInstanceOfSatisfying(HttpError.class, e -> assertThat(e.status()).isEqualTo(403));
  }
}
