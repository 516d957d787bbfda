package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class HeldEntryTest {

  @Test
  void roundTripsKeyValueTimestampAndHeaders() {
    RecordHeaders headers = new RecordHeaders();
    headers.add("a", "1".getBytes(StandardCharsets.UTF_8));
    headers.add("n", null);
    headers.add("e", new byte[0]);
    HeldEntry e = new HeldEntry("alice", new byte[] {1, 2, 3}, 42L, headers);

    HeldEntry back = HeldEntry.decode(e.encode());

    assertThat(back.key()).isEqualTo("alice");
    assertThat(back.value()).containsExactly(1, 2, 3);
    assertThat(back.timestamp()).isEqualTo(42L);
    assertThat(back.headers().toArray()).hasSize(3);
    assertThat(back.headers().lastHeader("a").value()).isEqualTo("1".getBytes(StandardCharsets.UTF_8));
    assertThat(back.headers().lastHeader("n").value()).isNull();
    assertThat(back.headers().lastHeader("e").value()).isEmpty(); // empty is not absent
  }
}
