package dev.impipe.notify.decide;

import dev.impipe.runtime.streams.InputLag;
import java.util.List;
import java.util.Optional;

/**
 * Whether a task has fetched its inputs up to their end offsets at its start ({@link InputHorizon}): asked of the
 * stream thread's consumer through {@link InputLag}.
 *
 * @param inputs the input topics, co-partitioned: a task reads the same partition of each
 */
record BacklogProbe(List<String> inputs, InputLag lag) {

  BacklogProbe {
    inputs = List.copyOf(inputs);
  }

  /**
   * Whether the consumer has fetched {@code partition} of every input up to its end offset asked at wall time
   * {@code asOf} or later (false while that is not known: no position yet, the broker not answering).
   */
  boolean fetched(int partition, long asOf) {
    for (String topic : inputs) {
      Optional<InputLag.Ends> ends = lag.ends(topic, partition, asOf);
      if (ends.isEmpty() || ends.get().position() < ends.get().end()) {
        return false;
      }
    }
    return true;
  }
}
