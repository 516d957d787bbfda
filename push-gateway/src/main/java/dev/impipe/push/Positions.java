package dev.impipe.push;

import dev.impipe.inbox.query.SyncCursor;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where one connection is in the user's inbox and in each large group's timeline: what it pushed (the vector a
 * frame's cursor and the next sync page are read after) and what the device committed by its ACKs (what a resync
 * tells it to start from). Pure; the connection holds its lock while using it.
 */
final class Positions {

  /** Inbox seq of the last entry pushed (or the committed cursor, once the first page told it). */
  private long pushed = -1;
  /** Per large group: timeline seq of the last entry pushed (or the position a page reported). */
  private final TreeMap<String, Long> groups = new TreeMap<>();
  private long committedInbox = -1;
  private final Map<String, Long> committedGroups = new HashMap<>();
  /** The inbox generation the store's pages are of (ADR 0014): every cursor this connection hands out is of it. */
  private int generation;

  /** The inbox generation of the positions: the one of the last page's cursor (0 before any). */
  int generation() {
    return generation;
  }

  long pushed() {
    return pushed;
  }

  void pushed(long seq) {
    pushed = seq;
  }

  /** The timeline seq last pushed of {@code group} (-1: none). */
  long group(String group) {
    return groups.getOrDefault(group, -1L);
  }

  /** Records a group push; returns the position before (null: none), for {@link #undoGroup}. */
  Long pushedGroup(String group, long seq) {
    return groups.put(group, seq);
  }

  /** Restores {@code group} to what {@link #pushedGroup} returned (the frame did not fit after all). */
  void undoGroup(String group, Long before) {
    if (before == null) {
      groups.remove(group);
    } else {
      groups.put(group, before);
    }
  }

  /** The cursor of everything pushed: inbox and every group. */
  SyncCursor vector() {
    return SyncCursor.of(pushed, groups).inGeneration(generation);
  }

  /** The cursor an inbox entry at {@code seq} goes out with. */
  SyncCursor vectorAt(long seq) {
    return SyncCursor.of(seq, groups).inGeneration(generation);
  }

  /**
   * The backlog starts after {@code cursor}, the device's own (translated into the generation served): it has what
   * came before, so that is what it pushed and committed (an ACK at or below it moves nothing, a resync names it).
   */
  void startAfter(SyncCursor cursor) {
    generation = cursor.generation();
    pushed = Math.max(pushed, cursor.inbox());
    committedInbox = Math.max(committedInbox, cursor.inbox());
    cursor.groups().forEach((g, seq) -> {
      groups.merge(g, seq, Math::max);
      committedGroups.merge(g, seq, Math::max);
    });
  }

  /** A page ended: the store's {@code next} inbox position and the group positions its cursor may commit past. */
  void pageEnded(long next, SyncCursor cursor) {
    pushed = Math.max(pushed, next);
    if (cursor != null) {
      generation = cursor.generation();
      cursor.groups().forEach((g, seq) -> groups.merge(g, seq, Math::max));
    }
  }

  /** Why the device may not ACK {@code cursor} (beyond what was pushed), or null when it may. */
  String refusal(SyncCursor cursor) {
    if (cursor.generation() != generation) {
      return "ack for a cursor of inbox generation " + cursor.generation() + ", this connection is at generation "
          + generation + ": resync";
    }
    if (cursor.inbox() > pushed) {
      return "ack for seq " + cursor.inbox() + ", beyond what was pushed (" + pushed + ")";
    }
    for (Map.Entry<String, Long> g : cursor.groups().entrySet()) {
      if (g.getValue() > group(g.getKey())) {
        return "ack for group " + g.getKey() + " beyond what was pushed";
      }
    }
    return null;
  }

  /** Commits the inbox at {@code seq}; true when that moved the committed position on. */
  boolean commitInbox(long seq) {
    if (seq <= committedInbox) {
      return false;
    }
    committedInbox = seq;
    return true;
  }

  /** Commits {@code group} at {@code seq}; true when that moved its committed position on. */
  boolean commitGroup(String group, long seq) {
    if (seq <= committedGroups.getOrDefault(group, -1L)) {
      return false;
    }
    committedGroups.put(group, seq);
    return true;
  }

  /** The cursor the device committed (null before its first inbox ACK): where a resync starts. */
  String committed() {
    return committedInbox >= 0 ? SyncCursor.of(committedInbox, committedGroups).inGeneration(generation).encode()
        : null;
  }
}
