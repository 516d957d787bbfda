package dev.impipe.runtime.streams;

import java.util.Optional;

/**
 * How far one input partition of a task extends, as the broker and the stream thread's consumer know it. The ACK
 * wheel uses it to tell an input that went quiet (everything processed) from one that is only not being read (records
 * waiting at the broker), which record times alone cannot tell apart, and to know up to which wall time an input
 * has been read: once the task has processed up to an end offset asked at time {@code t}, every record written
 * before {@code t} has been processed. The notification decider uses it to know when a task, after it started, has
 * fetched the backlog that was waiting for it.
 */
@FunctionalInterface
public interface InputLag {

  /** Not known: the caller falls back to its time rules (tests on a TopologyTestDriver, no consumer registered). */
  InputLag UNKNOWN = (topic, partition, asOf) -> Optional.empty();

  /**
   * The broker's end offset of {@code topic}-{@code partition} (read_committed: the last stable offset) asked at
   * wall time {@code asOf} or later, with the consumer's position then; empty when not known (not assigned, no
   * position yet, the broker not answering, no consumer known).
   */
  Optional<Ends> ends(String topic, int partition, long asOf);

  /** An end offset and the consumer's position at the time it was asked. */
  record Ends(long end, long position) {}
}
