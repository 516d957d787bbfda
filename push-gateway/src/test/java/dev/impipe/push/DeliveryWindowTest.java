package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The entries pushed and not ACKed: what a redelivery needs, cleared by cumulative ACKs. */
class DeliveryWindowTest {

  @Test
  void inboxAcksAreCumulativeAndRedeliveryFindsTheRest() {
    // Given inbox seqs 3, 5 and 8 pushed, and two group entries
    DeliveryWindow window = new DeliveryWindow();
    window.pushed(3, "m3", "c3");
    window.pushed(5, "m5", "c5");
    window.pushed(8, null, "c8");
    window.pushedGroup("g", 10);
    window.pushedGroup("g", 11);
    assertThat(window.size()).isEqualTo(5);

    // When the device ACKs seq 5
    window.ackInbox(5);

    // Then only 8 is left of the inbox, with the cursor its frame carried
    assertThat(window.contains(3)).isFalse();
    assertThat(window.contains(5)).isFalse();
    assertThat(window.contains(8)).isTrue();
    assertThat(window.unacked(List.of(3L, 5L, 8L))).containsOnlyKeys(8L);
    assertThat(window.unacked(List.of(8L)).get(8L)).isEqualTo(new DeliveryWindow.Pushed(null, "c8"));
    assertThat(window.size()).isEqualTo(3);
  }

  @Test
  void groupAcksClearTheirGroupUpToTheSeqOnly() {
    DeliveryWindow window = new DeliveryWindow();
    window.pushedGroup("g", 10);
    window.pushedGroup("g", 11);
    window.pushedGroup("h", 4);
    window.ackGroup("g", 10);
    assertThat(window.size()).isEqualTo(2);
    window.ackGroup("g", 99);
    window.ackGroup("nope", 99);
    assertThat(window.size()).isEqualTo(1);
    window.clear();
    assertThat(window.size()).isZero();
  }
}
