package dev.impipe.delay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.delay.DelayHeaders;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The delay processor's decisions alone: each command's verdict, who may cancel, where things are filed. */
class ScheduleRulesTest {

  private static final long NOW = 1_000_000L;
  private static final long MAX_DELAY = 10_000L;
  private static final Function<String, Optional<String>> ANY_TARGET = topic -> Optional.empty();

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static ScheduleCommand command(String id, ScheduleOp op, long dueMs, Map<String, ByteBuffer> headers) {
    return ScheduleCommand.newBuilder().setId(id).setOp(op).setDeliverAt(Instant.ofEpochMilli(dueMs))
        .setTargetTopic("im.messages").setKey(ByteBuffer.wrap(utf8("k"))).setValue(ByteBuffer.wrap(utf8("v")))
        .setHeaders(headers).build();
  }

  private static ScheduleRules.Verdict check(String id, ScheduleCommand command) {
    return ScheduleRules.check(id, command, NOW, MAX_DELAY, ANY_TARGET);
  }

  @Test
  void aValidScheduleIsFiledUnderItsDueTimeWithItsTargetKeyValueAndHeaders() {
    ScheduleCommand cmd = command("a", ScheduleOp.SCHEDULE, NOW + MAX_DELAY, Map.of("h", ByteBuffer.wrap(utf8("x"))));

    ScheduleRules.Verdict verdict = check("a", cmd);

    assertThat(verdict).isInstanceOfSatisfying(ScheduleRules.Schedule.class, s -> {
      assertThat(s.dueMs()).isEqualTo(NOW + MAX_DELAY);
      assertThat(s.entry().deliverAtMs()).isEqualTo(NOW + MAX_DELAY);
      assertThat(s.entry().topic()).isEqualTo("im.messages");
      assertThat(s.entry().key()).isEqualTo(utf8("k"));
      assertThat(s.entry().value()).isEqualTo(utf8("v"));
      assertThat(s.entry().headers()).containsOnlyKeys("h");
      assertThat(s.entry().headers().get("h")).isEqualTo(utf8("x"));
    });
  }

  @Test
  void aScheduleWithoutKeyOrValueKeepsThemNull() {
    ScheduleCommand cmd = command("a", ScheduleOp.SCHEDULE, NOW, Map.of());
    cmd.setKey(null);
    cmd.setValue(null);

    assertThat(check("a", cmd)).isInstanceOfSatisfying(ScheduleRules.Schedule.class, s -> {
      assertThat(s.entry().key()).isNull();
      assertThat(s.entry().value()).isNull();
    });
  }

  @Test
  void badKeysAndUnknownOperationsAreInvalid() {
    ScheduleCommand ok = command("a", ScheduleOp.SCHEDULE, NOW, Map.of());
    assertThat(check("", ok)).isEqualTo(new ScheduleRules.Refuse("invalid",
        "missing key: a schedule command is keyed by its schedule id"));
    assertThat(check("a\0", command("a\0", ScheduleOp.SCHEDULE, NOW, Map.of())))
        .isEqualTo(new ScheduleRules.Refuse("invalid", "schedule id contains a NUL character"));
    assertThat(check("b", ok)).isEqualTo(new ScheduleRules.Refuse("invalid",
        "key 'b' does not match schedule id 'a'"));
    assertThat(check("a", command("a", ScheduleOp.UNKNOWN, NOW, Map.of()))).isEqualTo(new ScheduleRules.Refuse(
        "invalid", "unknown schedule operation UNKNOWN (written by a newer producer?)"));
  }

  @Test
  void aScheduleBeyondTheMaximumDelayIsRefusedOneAtTheLimitIsNot() {
    ScheduleRules.Verdict late = check("a", command("a", ScheduleOp.SCHEDULE, NOW + MAX_DELAY + 1, Map.of()));

    assertThat(late).isInstanceOfSatisfying(ScheduleRules.Refuse.class, r -> {
      assertThat(r.category()).isEqualTo("max-delay");
      assertThat(r.reason()).isEqualTo("deliverAt " + Instant.ofEpochMilli(NOW + MAX_DELAY + 1)
          + " is more than the maximum delay of PT10S ahead");
    });
    assertThat(check("a", command("a", ScheduleOp.SCHEDULE, NOW + MAX_DELAY, Map.of())))
        .isInstanceOf(ScheduleRules.Schedule.class);
  }

  @Test
  void aForbiddenTargetIsRefusedWithItsReason() {
    ScheduleRules.Verdict verdict = ScheduleRules.check("a", command("a", ScheduleOp.SCHEDULE, NOW, Map.of()), NOW,
        MAX_DELAY, topic -> Optional.of("no " + topic));

    assertThat(verdict).isEqualTo(new ScheduleRules.Refuse("target", "no im.messages"));
  }

  @Test
  void aCancelCarriesItsRequesterIfAnyAndIsNotCheckedForDelayOrTarget() {
    Map<String, ByteBuffer> byBob = new HashMap<>(Map.of(DelayHeaders.REQUESTER, ByteBuffer.wrap(utf8("bob"))));
    ScheduleCommand far = command("a", ScheduleOp.CANCEL, NOW + 10 * MAX_DELAY, byBob);

    assertThat(ScheduleRules.check("a", far, NOW, MAX_DELAY, topic -> Optional.of("no")))
        .isEqualTo(new ScheduleRules.Cancel("bob"));
    assertThat(check("a", command("a", ScheduleOp.CANCEL, NOW, Map.of())))
        .isEqualTo(new ScheduleRules.Cancel(null));
  }

  @Test
  void onlyTheSenderMayCancelASchedulesThatRecordsOne() {
    ScheduledEntry alices = new ScheduledEntry(NOW, "im.messages", null, null, Map.of(DelayHeaders.SENDER,
        utf8("alice")));
    ScheduledEntry operators = new ScheduledEntry(NOW, "im.messages", null, null, Map.of());

    assertThat(ScheduleRules.cancelRefusal("a", "bob", alices))
        .contains("CANCEL of scheduled message a by bob, but only its sender may cancel it");
    assertThat(ScheduleRules.cancelRefusal("a", "alice", alices)).isEmpty();
    assertThat(ScheduleRules.cancelRefusal("a", null, alices)).isEmpty();
    assertThat(ScheduleRules.cancelRefusal("a", "bob", operators)).isEmpty();
    assertThat(ScheduleRules.cancelRefusal("a", "bob", null)).isEmpty();
  }

  @Test
  void aScheduleIsFiledAtItsDueTimeButNeverBeforeTheEpochOrTheSweep() {
    assertThat(ScheduleRules.fileAt(500, 100)).isEqualTo(500);
    assertThat(ScheduleRules.fileAt(50, 100)).isEqualTo(100);
    assertThat(ScheduleRules.fileAt(-5, 0)).isZero();
  }

  @Test
  void thePositionIsFiledAtItsSegmentStartPlusTheRetention() {
    long segment = 1_000;
    assertThat(ScheduleRules.positionTs(ScheduleCodec.duePrefix(2_500), segment))
        .isEqualTo(2_000 + ScheduleRules.STORE_RETENTION_MS - 1);
    assertThat(ScheduleRules.positionTs(ScheduleCodec.duePrefix(2_000), segment))
        .isEqualTo(2_000 + ScheduleRules.STORE_RETENTION_MS - 1);
    assertThat(ScheduleRules.positionTs(ScheduleCodec.duePrefix(1_999), segment))
        .isEqualTo(1_000 + ScheduleRules.STORE_RETENTION_MS - 1);
  }
}
