package dev.impipe.notify.decide;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.streams.OrderedKey;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

class NotifyKeysTest {

  @Test
  void dueKeysSortByTimeFirstAndDecode() {
    Bytes early = NotifyKeys.due(-5, "zed", "z", "z");
    Bytes late = NotifyKeys.due(1_000, "alice", "a", "a");
    assertThat(early.compareTo(late)).isNegative();
    assertThat(NotifyKeys.decodeDue(late)).isEqualTo(new NotifyKeys.Due(1_000, "alice", "a", "a"));
    // the bare start of a time sits before every key of that time, after every key of the time before
    assertThat(NotifyKeys.dueStart(1_000).compareTo(late)).isNegative();
    assertThat(NotifyKeys.dueStart(1_001).compareTo(late)).isPositive();
    assertThatThrownBy(() -> NotifyKeys.decodeDue(NotifyKeys.dueStart(3))).isInstanceOf(RuntimeException.class);
    Bytes longer = Bytes.wrap(OrderedKey.key().rest(late.get()).int32(1).build());
    assertThatThrownBy(() -> NotifyKeys.decodeDue(longer)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aDevicesPendingKeysAreOneRangeThatHoldsNoOtherDevice() {
    Bytes from = NotifyKeys.pendingFrom("bob", "phone");
    Bytes to = NotifyKeys.pendingTo("bob", "phone");
    Bytes mine = NotifyKeys.pending("bob", "phone", "g1");
    assertThat(mine.compareTo(from)).isPositive();
    assertThat(mine.compareTo(to)).isNegative();
    assertThat(NotifyKeys.pending("bob", "phone2", "g1").compareTo(to)).isPositive();
    assertThat(NotifyKeys.pending("bobby", "phone", "g1").compareTo(to)).isPositive();
    assertThat(NotifyKeys.decodePending(mine)).isEqualTo(new NotifyKeys.Burst("bob", "phone", "g1"));
  }

  @Test
  void receivedValuesRoundTrip() {
    assertThat(NotifyKeys.decodeReceived(NotifyKeys.receivedValue(42))).isEqualTo(42);
    assertThat(NotifyKeys.received("bob", "phone")).isEqualTo(NotifyKeys.pendingFrom("bob", "phone"));
    assertThatThrownBy(() -> NotifyKeys.decodeReceived(new byte[] {1, 2})).isInstanceOf(SerializationException.class);
    byte[] longer = java.util.Arrays.copyOf(NotifyKeys.receivedValue(1), 10);
    assertThatThrownBy(() -> NotifyKeys.decodeReceived(longer)).isInstanceOf(SerializationException.class);
  }

  @Test
  void registrationKeysNameOneUsersDevices() {
    assertThat(RegistrationKeys.key("bob", "phone")).isEqualTo("bob|phone");
    assertThat(RegistrationKeys.key("bobby", "x")).doesNotStartWith(RegistrationKeys.prefix("bob"));
    assertThat(RegistrationKeys.deviceOf("bob|phone")).isEqualTo("phone");
    assertThatThrownBy(() -> RegistrationKeys.key("b|ob", "phone")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RegistrationKeys.key("bob", "ph|one")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RegistrationKeys.key("bob", "|phone")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RegistrationKeys.key("bob", "")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RegistrationKeys.prefix(null)).isInstanceOf(IllegalArgumentException.class);
  }
}
