package dev.impipe.inbox.query;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * A device's position in its merged sync stream: its inbox seq plus, per large group, its seq in that group's
 * timeline ({@code #groupId}), in one inbox generation (ADR 0014: inbox seqs are offsets of that generation's
 * {@code im.inbox[.g<g>]}; group seqs too). Handed to clients as an opaque string: base64url (no padding) of
 * {@code v1|<inboxSeq>|<groupId>=<groupSeq>|...} in generation 0 and {@code v2|<generation>|<inboxSeq>|...} in a
 * later one, groups sorted by id; a group the device has no position in is left out. Clients only echo it back to
 * {@code PUT .../cursor} or a sync's {@code after}.
 *
 * @param inbox last inbox seq the device has (-1: none)
 * @param groups last group-timeline seq per group id (absent: none yet)
 * @param generation the inbox generation the seqs belong to (>= 0)
 */
public record SyncCursor(long inbox, SortedMap<String, Long> groups, int generation) {

  private static final String GENERATION_0 = "v1";
  private static final String LATER_GENERATION = "v2";
  private static final Pattern GROUP_ID = Pattern.compile("[A-Za-z0-9._@-]{1,128}");

  public SyncCursor {
    groups = Collections.unmodifiableSortedMap(new TreeMap<>(groups));
    if (generation < 0) {
      throw new IllegalArgumentException("an inbox generation is >= 0, not " + generation);
    }
  }

  /** A position in generation 0. */
  public SyncCursor(long inbox, SortedMap<String, Long> groups) {
    this(inbox, groups, 0);
  }

  /** A position in generation 0. */
  public static SyncCursor of(long inbox, Map<String, Long> groups) {
    return new SyncCursor(inbox, new TreeMap<>(groups), 0);
  }

  /** The same seqs, read as positions of {@code inboxGeneration}. */
  public SyncCursor inGeneration(int inboxGeneration) {
    return new SyncCursor(inbox, groups, inboxGeneration);
  }

  /** The device id under which a group position is committed to {@code im.device-cursors}. */
  public static String groupDevice(String deviceId, String groupId) {
    // '#' is not allowed in device or group ids, so this never names a real device, nor two groups alike.
    return deviceId + "#" + groupId;
  }

  /**
   * What to commit for {@code deviceId}: device id on {@code im.device-cursors} to seq (the inbox under the device
   * id itself, each group under {@link #groupDevice}); an inbox seq of -1 commits nothing.
   */
  public Map<String, Long> components(String deviceId) {
    Map<String, Long> out = new java.util.LinkedHashMap<>();
    if (inbox >= 0) {
      out.put(deviceId, inbox);
    }
    groups.forEach((group, seq) -> out.put(groupDevice(deviceId, group), seq));
    return out;
  }

  public String encode() {
    StringBuilder sb = generation == 0 ? new StringBuilder(GENERATION_0)
        : new StringBuilder(LATER_GENERATION).append('|').append(generation);
    sb.append('|').append(inbox);
    groups.forEach((g, seq) -> sb.append('|').append(g).append('=').append(seq));
    return Base64.getUrlEncoder().withoutPadding().encodeToString(sb.toString().getBytes(StandardCharsets.UTF_8));
  }

  /** Parses {@link #encode()}; {@link IllegalArgumentException} for anything else. */
  public static SyncCursor decode(String opaque) {
    String text;
    try {
      text = new String(Base64.getUrlDecoder().decode(opaque), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("not a sync cursor");
    }
    String[] parts = text.split("\\|", -1);
    // v1|<inbox>|...: generation 0; v2|<generation>|<inbox>|...: a later one (a v2 of generation 0 is not written)
    int first = parts[0].equals(GENERATION_0) ? 1 : parts[0].equals(LATER_GENERATION) ? 2 : -1;
    if (first < 0 || parts.length < first + 1) {
      throw new IllegalArgumentException("not a sync cursor");
    }
    try {
      int generation = first == 1 ? 0 : Integer.parseInt(parts[1]);
      if (first == 2 && (generation < 1 || !parts[1].equals(Integer.toString(generation)))) {
        throw new IllegalArgumentException("not a sync cursor");
      }
      long inbox = Long.parseLong(parts[first]);
      TreeMap<String, Long> groups = new TreeMap<>();
      for (int i = first + 1; i < parts.length; i++) {
        int eq = parts[i].indexOf('=');
        String group = eq < 0 ? "" : parts[i].substring(0, eq);
        if (!GROUP_ID.matcher(group).matches() || groups.containsKey(group)) {
          throw new IllegalArgumentException("not a sync cursor");
        }
        long seq = Long.parseLong(parts[i].substring(eq + 1));
        if (seq < 0) {
          throw new IllegalArgumentException("not a sync cursor");
        }
        groups.put(group, seq);
      }
      if (inbox < -1) {
        throw new IllegalArgumentException("not a sync cursor");
      }
      return new SyncCursor(inbox, groups, generation);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a sync cursor");
    }
  }
}
