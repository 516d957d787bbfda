package dev.impipe.ack.wheel;

import java.util.OptionalLong;

/**
 * Whether one input partition of a task still has records the task has not processed, as the stream thread's
 * consumer knows it. The wheel uses it to tell an input that went quiet (everything processed) from one that is only
 * not being read (records waiting at the broker), which record times alone cannot tell apart.
 */
@FunctionalInterface
public interface InputLag {

  /** Not known: the wheel falls back to its time rules (tests on a TopologyTestDriver, no consumer registered). */
  InputLag UNKNOWN = (topic, partition, lastProcessedOffset, asOf) -> OptionalLong.empty();

  /**
   * Records of {@code topic}-{@code partition} not processed yet: more than 0 when the broker holds records the
   * consumer has not handed to the task (read_committed, up to the last stable offset); 0 only when the broker's end
   * offset, asked at wall time {@code asOf} or later, is the consumer's position and that is right after
   * {@code lastProcessedOffset} (so nothing fetched waits in the task's buffer either): every record written before
   * {@code asOf} has been processed; empty when it cannot tell (nothing processed yet, fetched records or transaction
   * markers in between, the broker not answering, or no consumer known).
   */
  OptionalLong unprocessed(String topic, int partition, long lastProcessedOffset, long asOf);
}
