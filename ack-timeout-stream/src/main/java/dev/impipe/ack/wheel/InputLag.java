package dev.impipe.ack.wheel;

import java.util.OptionalLong;

/**
 * How far the stream thread's consumer is behind the end of one input partition: the records the broker holds
 * (up to the last stable offset, read_committed) beyond the consumer's position. The wheel uses it to tell an input
 * that went quiet (read to its end) from one that is only not being read (records waiting at the broker), which
 * record times alone cannot tell apart.
 */
@FunctionalInterface
public interface InputLag {

  /** Not known: the wheel falls back to its time rules (tests on a TopologyTestDriver, no consumer registered). */
  InputLag UNKNOWN = (topic, partition) -> OptionalLong.empty();

  /** Records of {@code topic}-{@code partition} not fetched yet by the calling stream thread's consumer. */
  OptionalLong behind(String topic, int partition);
}
