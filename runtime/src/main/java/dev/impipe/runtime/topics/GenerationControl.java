package dev.impipe.runtime.topics;

import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The control records of an online inbox switch (ADR 0014, online switch-over): the compacted one-partition topic
 * {@code <prefix>inbox-generation}, String keys and values.
 * <ul>
 *   <li>{@code switch} -> {@code "<target> FENCE"}: writers of the inbox stop writing generation target-1; each
 *       fan-out task confirms with {@code fenced.<target>.<task>} -> {@code "<task>"}, written in the same
 *       transaction as its last entries of the old generation, and holds its new entries back from then on;
 *   <li>{@code switch} -> {@code "<target> LIVE"}: the copy has passed every fence; generation target is live and
 *       the held-back entries are written to it.
 * </ul>
 */
public final class GenerationControl {

  public static final String SWITCH_KEY = "switch";
  /** On an inbox entry the fan-out wrote to another generation than its configured one: that generation. */
  public static final String GENERATION_HEADER = "im.inbox-generation";

  private static final String FENCED_PREFIX = "fenced.";
  private static final Pattern SUFFIX = Pattern.compile("\\.g\\d+$");

  /** The phases of a switch to a target generation. */
  public enum Phase { FENCE, LIVE }

  /** A switch record's value. */
  public record Switch(int target, Phase phase) {

    public Switch {
      if (target < 1) {
        throw new IllegalArgumentException("a switch targets generation >= 1, not " + target);
      }
    }

    public String encode() {
      return target + " " + phase;
    }

    /** The switch a value encodes, empty for one that is not a switch (never an exception: a bad record is skipped). */
    public static Optional<Switch> decode(String value) {
      if (value == null) {
        return Optional.empty();
      }
      String[] parts = value.trim().split(" ");
      try {
        return parts.length == 2 ? Optional.of(new Switch(Integer.parseInt(parts[0]), Phase.valueOf(parts[1])))
            : Optional.empty();
      } catch (IllegalArgumentException e) {
        return Optional.empty();
      }
    }
  }

  private GenerationControl() {}

  /** The control topic of these names' prefix. */
  public static String topic(TopicNames names) {
    String messages = names.messages();
    return messages.substring(0, messages.length() - "messages".length()) + "inbox-generation";
  }

  /** The inbox topic of {@code generation}, whatever generation {@code names} are of. */
  public static String inboxOf(TopicNames names, int generation) {
    Matcher m = SUFFIX.matcher(names.inbox());
    String base = m.find() ? names.inbox().substring(0, m.start()) : names.inbox();
    return generation == 0 ? base : base + ".g" + generation;
  }

  /** The key of fan-out task {@code task}'s fence of the generation before {@code target}. */
  public static String fenceKey(int target, int task) {
    return FENCED_PREFIX + target + "." + task;
  }

  /** The task a fence key names if it is a fence for {@code target}. */
  public static OptionalInt fencedTask(String key, int target) {
    String prefix = FENCED_PREFIX + target + ".";
    if (key == null || !key.startsWith(prefix)) {
      return OptionalInt.empty();
    }
    try {
      return OptionalInt.of(Integer.parseInt(key.substring(prefix.length())));
    } catch (NumberFormatException e) {
      return OptionalInt.empty();
    }
  }
}
