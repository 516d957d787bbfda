package dev.impipe.push;

import java.util.List;

/** Which of a user's sockets give way to a new one. Pure. */
final class SocketCap {

  private SocketCap() {}

  /**
   * The sockets to close so that at most {@code keep} of {@code open} (oldest first) remain: the oldest. The newest
   * is the one a person is looking at; an old one is often a tab or an app that went away without closing.
   */
  static <T> List<T> oldestBeyond(List<T> open, int keep) {
    int excess = open.size() - Math.max(0, keep);
    return excess <= 0 ? List.of() : List.copyOf(open.subList(0, excess));
  }
}
