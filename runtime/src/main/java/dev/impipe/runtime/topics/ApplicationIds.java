package dev.impipe.runtime.topics;

import java.util.Set;

/**
 * Streams application ids per inbox generation (ADR 0014). The apps whose state and consumer offsets are keyed by
 * user (partitioned like the inbox) get the generation in their id at g >= 1 ({@code im.inbox-store.g1}), so a grown
 * deployment starts them with fresh offsets and their own changelogs, without a manual application reset. Every other
 * app, and every app at generation 0, keeps {@code <prefix><app>}.
 */
public final class ApplicationIds {

  /** The apps that read user-keyed topics with state. */
  public static final Set<String> PER_GENERATION = Set.of("inbox-store", "ack-timeout", "notify");

  private ApplicationIds() {}

  /** {@code <prefix><app>}, suffixed {@code .g<generation>} for a {@link #PER_GENERATION} app at g >= 1. */
  public static String applicationId(String topicPrefix, String app, int generation) {
    if (generation < 0) {
      throw new IllegalArgumentException("an inbox generation is >= 0, not " + generation);
    }
    String id = topicPrefix + app;
    return generation > 0 && PER_GENERATION.contains(app) ? id + ".g" + generation : id;
  }
}
