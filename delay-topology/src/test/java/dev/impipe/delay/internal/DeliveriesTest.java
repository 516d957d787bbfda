package dev.impipe.delay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.delay.DelayHeaders;
import dev.impipe.runtime.streams.RejectedHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.streams.processor.api.Record;
import org.junit.jupiter.api.Test;

/** The records a sweep writes for a due schedule and for an entry that does not decode. */
class DeliveriesTest {

  private static final ScheduledEntry ENTRY = new ScheduledEntry(900, "im.messages", utf8("conv"), utf8("body"),
      Map.of("trace", utf8("t1")));

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String header(Record<byte[], Outgoing> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  @Test
  void aDueScheduleGoesToItsTargetWithItsHeadersAndWhenItWasScheduled() {
    Record<byte[], Outgoing> r = Deliveries.due(utf8("a"), ENTRY, 1_000, Optional.empty(), "im.rejected");

    assertThat(r.key()).isEqualTo(utf8("conv"));
    assertThat(r.value().topic()).isEqualTo("im.messages");
    assertThat(r.value().value()).isEqualTo(utf8("body"));
    assertThat(r.timestamp()).isEqualTo(1_000);
    assertThat(header(r, "trace")).isEqualTo("t1");
    assertThat(header(r, DelayHeaders.SCHEDULED_AT)).isEqualTo("900");
    assertThat(header(r, RejectedHeaders.CODE)).isNull();
  }

  @Test
  void aScheduleWhoseTargetWentAwayGoesToTheRejectedTopicWithTheReason() {
    Record<byte[], Outgoing> r = Deliveries.due(utf8("a"), ENTRY, 1_000, Optional.of("gone"), "im.rejected");

    assertThat(r.key()).isEqualTo(utf8("conv"));
    assertThat(r.value().topic()).isEqualTo("im.rejected");
    assertThat(r.value().value()).isEqualTo(utf8("body"));
    assertThat(header(r, "trace")).isEqualTo("t1");
    assertThat(header(r, DelayHeaders.SCHEDULE_ID)).isEqualTo("a");
    assertThat(header(r, RejectedHeaders.MESSAGE)).isEqualTo("undeliverable at 1000: gone");
    assertThat(header(r, RejectedHeaders.CODE)).isEqualTo("TARGET");
    assertThat(header(r, RejectedHeaders.SOURCE)).isEqualTo("delay");
    assertThat(header(r, RejectedHeaders.TOPIC)).isEqualTo("im.messages");
    assertThat(header(r, DelayHeaders.SCHEDULED_AT)).isNull();
  }

  @Test
  void anUndecodableEntryGoesToTheRejectedTopicAsStoredKeyedByItsId() {
    byte[] key = ScheduleCodec.scheduleKey(900, utf8("a"));

    Record<byte[], Outgoing> r = Deliveries.undecodable("schedule", key, new byte[] {9, 9},
        new IllegalArgumentException("bad"), 1_000, "im.rejected");

    assertThat(r.key()).isEqualTo(utf8("a"));
    assertThat(r.value().topic()).isEqualTo("im.rejected");
    assertThat(r.value().value()).containsExactly(9, 9);
    assertThat(r.timestamp()).isEqualTo(1_000);
    assertThat(header(r, DelayHeaders.SCHEDULE_ID)).isEqualTo("a");
    assertThat(header(r, RejectedHeaders.SOURCE)).isEqualTo("delay");
    assertThat(header(r, RejectedHeaders.CODE)).isEqualTo("UNDECODABLE");
    assertThat(header(r, RejectedHeaders.STORE)).isEqualTo("schedule");
    assertThat(r.headers().lastHeader(RejectedHeaders.STORE_KEY).value()).isEqualTo(key);
    assertThat(header(r, RejectedHeaders.MESSAGE)).contains("does not decode").contains("bad");
  }
}
