package dev.impipe.cli.grow;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Device cursors from one generation to the next. A cursor's new seq is the new offset of the newest copied entry of
 * its timeline whose previous seq is at or below the old seq ({@code -1} if there is none): the device's next sync
 * then returns exactly the copied entries it had not seen (those with a previous seq above its old cursor), in order.
 *
 * <p>A cursor's timeline is its user's inbox (key = userId), or for a large group's position, committed under device
 * id {@code <deviceId>#<groupId>} (inbox-store {@code SyncCursor.groupDevice}), the group timeline (key
 * {@code #<groupId>} in the inbox). Fed every copied entry in new-offset order per key (a key's entries are in one
 * partition, in their old order); memory is one slot per cursor, whatever the inbox's size.
 */
public final class CursorTranslation {

  /** A cursor in the new generation. */
  public record Translated(String userId, String deviceId, long oldSeq, long newSeq) {}

  private static final class Slot {
    final String userId;
    final String deviceId;
    long oldSeq;
    long newSeq = -1;

    Slot(String userId, String deviceId, long oldSeq) {
      this.userId = userId;
      this.deviceId = deviceId;
      this.oldSeq = oldSeq;
    }
  }

  /** Timeline key -> "userId|deviceId" -> slot. */
  private final Map<String, Map<String, Slot>> byTimeline = new HashMap<>();

  /** The inbox key of the timeline a cursor record points into. */
  public static String timelineOf(String userId, String deviceId) {
    int hash = deviceId.indexOf('#');
    return hash < 0 ? userId : deviceId.substring(hash);
  }

  /** A cursor record of the old generation; a later record of the same device replaces it (the newest wins). */
  public void oldCursor(String userId, String deviceId, long seq) {
    Map<String, Slot> slots = byTimeline.computeIfAbsent(timelineOf(userId, deviceId), k -> new LinkedHashMap<>());
    Slot slot = slots.computeIfAbsent(userId + "|" + deviceId, k -> new Slot(userId, deviceId, seq));
    slot.oldSeq = seq;
  }

  /** A copied entry of timeline {@code key} (a user id or {@code #groupId}): at {@code newOffset} now. */
  public void copiedEntry(String key, long prevSeq, long newOffset) {
    Map<String, Slot> slots = byTimeline.get(key);
    if (slots == null) {
      return;
    }
    for (Slot slot : slots.values()) {
      if (prevSeq <= slot.oldSeq && newOffset > slot.newSeq) {
        slot.newSeq = newOffset;
      }
    }
  }

  /** Every cursor's new seq, timelines in no particular order, a timeline's cursors in the order first seen. */
  public List<Translated> result() {
    List<Translated> out = new ArrayList<>();
    byTimeline.values().forEach(slots -> slots.values()
        .forEach(s -> out.add(new Translated(s.userId, s.deviceId, s.oldSeq, s.newSeq))));
    return out;
  }

  /** How many cursors (device and group positions) there are. */
  public int devices() {
    return byTimeline.values().stream().mapToInt(Map::size).sum();
  }
}
