package dev.impipe.push;

/**
 * How many entries the next backlog page asks for: as many as fit in the room the socket's write budget has, by the
 * largest frame this connection has seen (before any: a first page of at most {@link #FIRST_PAGE}), never more than
 * the configured page nor fewer than one. Pure.
 */
final class PageSizer {

  static final int FIRST_PAGE = 16;

  private final int page;
  private final long guess;
  private long largest;

  PageSizer(int page, long budget) {
    this.page = page;
    this.guess = Math.max(1, budget / FIRST_PAGE);
  }

  /** Entries to ask for with {@code free} bytes of room. */
  int limit(long free) {
    long per = largest > 0 ? largest : guess;
    return (int) Math.max(1, Math.min(page, free / per));
  }

  /** A frame of {@code bytes} was written. */
  void seen(int bytes) {
    largest = Math.max(largest, bytes);
  }
}
