package dev.impipe.delay;

import java.util.function.Predicate;

/**
 * Whether a topic exists, as far as is known right now, without blocking: {@code TRUE}, {@code FALSE}, or null when it
 * is not known yet (no successful listing, or a miss on a list too old to trust): ask again later, never reject.
 */
public interface TopicLookup extends Predicate<String> {

  Boolean lookup(String topic);

  @Override
  default boolean test(String topic) {
    return Boolean.TRUE.equals(lookup(topic));
  }
}
