package dev.impipe.delay.internal;

import dev.impipe.avro.ScheduleCommand;
import dev.impipe.avro.ScheduleOp;
import dev.impipe.delay.DelayHeaders;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * What the delay processor decides, without stores or a context: whether a command is valid and what it asks for,
 * whether a CANCEL is refused, and where a schedule and the sweep position are filed. The processor reads and writes
 * the stores around these answers.
 */
public final class ScheduleRules {

  /**
   * The segmented stores' retention as Kafka Streams sees it: far beyond any due time, so only the sweep's position
   * record (filed at its segment + this) expires segments.
   */
  public static final long STORE_RETENTION_MS = Duration.ofDays(36_500).toMillis();

  private ScheduleRules() {}

  /** What a decoded command asks for. */
  public sealed interface Verdict permits Schedule, Cancel, Refuse {}

  /** File {@code entry} under {@code dueMs}, replacing any undelivered schedule of the same id. */
  public record Schedule(long dueMs, ScheduledEntry entry) implements Verdict {}

  /** Remove the schedule; {@code requester} is who asked (null: an operator, never refused). */
  public record Cancel(String requester) implements Verdict {}

  /** Reject the command: {@code category} is the metric label, {@code reason} the rejected record's message. */
  public record Refuse(String category, String reason) implements Verdict {}

  /**
   * The verdict on {@code command}, keyed by {@code id} (the record key as text, "" if none), at wall-clock
   * {@code nowMs}.
   *
   * @param targetRejection why a target topic may not be written (empty: it may)
   */
  public static Verdict check(String id, ScheduleCommand command, long nowMs, long maxDelayMs,
      Function<String, Optional<String>> targetRejection) {
    if (id.isEmpty()) {
      return new Refuse("invalid", "missing key: a schedule command is keyed by its schedule id");
    }
    if (id.indexOf('\0') >= 0) {
      return new Refuse("invalid", "schedule id contains a NUL character");
    }
    if (!id.equals(command.getId())) {
      // CANCEL finds a schedule only in the partition of its key, so key and id must agree.
      return new Refuse("invalid", "key '" + id + "' does not match schedule id '" + command.getId() + "'");
    }
    if (command.getOp() == ScheduleOp.CANCEL) {
      ByteBuffer requester = command.getHeaders().get(DelayHeaders.REQUESTER);
      return new Cancel(requester == null ? null : new String(bytes(requester), StandardCharsets.UTF_8));
    }
    if (command.getOp() != ScheduleOp.SCHEDULE) {
      return new Refuse("invalid", "unknown schedule operation " + command.getOp()
          + " (written by a newer producer?)");
    }
    long dueMs = command.getDeliverAt().toEpochMilli();
    if (dueMs > nowMs + maxDelayMs) {
      return new Refuse("max-delay", "deliverAt " + command.getDeliverAt() + " is more than the maximum delay of "
          + Duration.ofMillis(maxDelayMs) + " ahead");
    }
    Optional<String> badTarget = targetRejection.apply(command.getTargetTopic());
    if (badTarget.isPresent()) {
      return new Refuse("target", badTarget.get());
    }
    return new Schedule(dueMs, new ScheduledEntry(dueMs, command.getTargetTopic(), bytes(command.getKey()),
        bytes(command.getValue()), headers(command.getHeaders())));
  }

  /**
   * Why a CANCEL of {@code id} by {@code requester} is refused, or empty: only the user who scheduled it
   * ({@link DelayHeaders#SENDER}) may cancel it. An operator's CANCEL (no requester), or one of a schedule that
   * records no sender (scheduled by an operator), is never refused.
   */
  public static Optional<String> cancelRefusal(String id, String requester, ScheduledEntry stored) {
    if (requester == null || stored == null) {
      return Optional.empty();
    }
    byte[] sender = stored.headers().get(DelayHeaders.SENDER);
    if (sender == null || requester.equals(new String(sender, StandardCharsets.UTF_8))) {
      return Optional.empty();
    }
    return Optional.of("CANCEL of scheduled message " + id + " by " + requester
        + ", but only its sender may cancel it");
  }

  /** The time a schedule due at {@code dueMs} is filed under: its due time, never before the epoch or the sweep. */
  public static long fileAt(long dueMs, long fileFromMs) {
    return Math.max(Math.max(0, dueMs), fileFromMs);
  }

  /** Where the position record for {@code resume} is filed: its segment's start + the stores' retention. */
  public static long positionTs(byte[] resume, long segmentMs) {
    long due = ScheduleCodec.dueOf(resume);
    return due - Math.floorMod(due, segmentMs) + STORE_RETENTION_MS - 1;
  }

  private static byte[] bytes(ByteBuffer buffer) {
    if (buffer == null) {
      return null;
    }
    ByteBuffer copy = buffer.duplicate();
    byte[] out = new byte[copy.remaining()];
    copy.get(out);
    return out;
  }

  private static Map<String, byte[]> headers(Map<String, ByteBuffer> headers) {
    Map<String, byte[]> out = new LinkedHashMap<>();
    headers.forEach((name, value) -> out.put(name, bytes(value)));
    return out;
  }
}
