package dev.impipe.cli.grow;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Device cursors from one generation to the next. A device's new cursor is the new offset of the newest copied entry
 * of its user whose previous seq is at or below the old cursor ({@code -1} if there is none): its next sync then
 * returns exactly the copied entries it had not seen (those with a previous seq above its old cursor), in order.
 *
 * <p>Fed every copied entry in new-offset order per user (a user's entries are in one partition, in their old order);
 * memory is one slot per device, whatever the inbox's size.
 */
public final class CursorTranslation {

  /** A device's cursor in the new generation. */
  public record Translated(String userId, String deviceId, long oldSeq, long newSeq) {}

  private static final class Slot {
    final String deviceId;
    final long oldSeq;
    long newSeq = -1;

    Slot(String deviceId, long oldSeq) {
      this.deviceId = deviceId;
      this.oldSeq = oldSeq;
    }
  }

  private final Map<String, Map<String, Slot>> byUser = new HashMap<>();

  /** A cursor record of the old generation; a later record of the same device replaces it (the newest wins). */
  public void oldCursor(String userId, String deviceId, long seq) {
    byUser.computeIfAbsent(userId, u -> new LinkedHashMap<>()).put(deviceId, new Slot(deviceId, seq));
  }

  /** A copied entry of {@code userId}: at {@code newOffset} now, at {@code prevSeq} before. */
  public void copiedEntry(String userId, long prevSeq, long newOffset) {
    Map<String, Slot> devices = byUser.get(userId);
    if (devices == null) {
      return;
    }
    for (Slot slot : devices.values()) {
      if (prevSeq <= slot.oldSeq && newOffset > slot.newSeq) {
        slot.newSeq = newOffset;
      }
    }
  }

  /** Every device's new cursor, users in no particular order, a user's devices in the order first seen. */
  public List<Translated> result() {
    List<Translated> out = new ArrayList<>();
    byUser.forEach((user, devices) -> devices.values()
        .forEach(s -> out.add(new Translated(user, s.deviceId, s.oldSeq, s.newSeq))));
    return out;
  }

  /** How many devices have a cursor. */
  public int devices() {
    return byUser.values().stream().mapToInt(Map::size).sum();
  }
}
