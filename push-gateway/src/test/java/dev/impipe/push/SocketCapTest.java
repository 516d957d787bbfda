package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which of a user's sockets give way to a new one: the oldest. */
class SocketCapTest {

  @Test
  void underTheCapNothingIsClosed() {
    assertThat(SocketCap.oldestBeyond(List.of("a", "b"), 2)).isEmpty();
    assertThat(SocketCap.oldestBeyond(List.of(), 0)).isEmpty();
  }

  @Test
  void atTheCapTheOldestGiveWay() {
    // Given sockets a (oldest), b, c and room to keep 2 besides the new one
    assertThat(SocketCap.oldestBeyond(List.of("a", "b", "c"), 2)).containsExactly("a");
    assertThat(SocketCap.oldestBeyond(List.of("a", "b", "c"), 0)).containsExactly("a", "b", "c");
  }
}
