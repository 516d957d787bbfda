package dev.impipe.ack.wheel;

import dev.impipe.ack.wheel.DeviceTimers.Run;
import dev.impipe.avro.AckTimeout;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Groups the seqs one round expires into AckTimeout records (pure): one per device, attempt count and finality, in
 * the order the round first met them, with the seqs sorted and the earliest first push and deadline of the group.
 */
final class TimeoutBatcher {

  /** One AckTimeout to emit; {@code isFinal}: no redelivery follows. */
  record Timeout(AckTimeout value, boolean isFinal) {}

  /** What one AckTimeout record groups: a device's seqs expiring in one round with the same attempt count. */
  private record Batch(String userId, String deviceId, int attempts, boolean isFinal) {}

  private final Map<Batch, Builder> batches = new LinkedHashMap<>();

  /** Adds the seqs of {@code run} of the device, expiring with the run's state. */
  void add(String userId, String deviceId, Run run, boolean isFinal) {
    batches.computeIfAbsent(new Batch(userId, deviceId, run.attempts(), isFinal), b -> new Builder()).add(run);
  }

  /** The records, in the order their groups were first added. */
  List<Timeout> timeouts() {
    List<Timeout> out = new ArrayList<>();
    batches.forEach((batch, builder) -> {
      List<Long> seqs = new ArrayList<>(builder.seqs);
      seqs.sort(null);
      out.add(new Timeout(AckTimeout.newBuilder()
          .setUserId(batch.userId())
          .setDeviceId(batch.deviceId())
          .setSeqs(seqs)
          .setFirstPushedAt(Instant.ofEpochMilli(builder.firstPushedAt))
          .setDeadline(Instant.ofEpochMilli(builder.deadline))
          .setAttempts(batch.attempts())
          .build(), batch.isFinal()));
    });
    return out;
  }

  private static final class Builder {
    private final List<Long> seqs = new ArrayList<>();
    private long firstPushedAt = Long.MAX_VALUE;
    private long deadline = Long.MAX_VALUE;

    void add(Run run) {
      for (long seq = run.fromSeq(); seq <= run.toSeq() && seq >= run.fromSeq(); seq++) {
        seqs.add(seq);
      }
      firstPushedAt = Math.min(firstPushedAt, run.firstPushedAt());
      deadline = Math.min(deadline, run.deadline());
    }
  }
}
