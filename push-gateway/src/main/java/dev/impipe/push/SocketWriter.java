package dev.impipe.push;

import io.vertx.core.Future;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * Writes a socket's frames against its {@link WriteBudget}: each frame takes its size until its write completes.
 * Entries and replies are written only if they fit; small control frames ({@code synced}, {@code resync}) are
 * written regardless. A backlog page that has to wait is continued by the write that brings the budget back to
 * half ({@link #whenHalfFree(Runnable)}).
 */
final class SocketWriter {

  private final Function<String, Future<Void>> sink;
  private final WriteBudget budget;
  private final LongConsumer completed;
  private Runnable waiting;

  /** @param sink writes one text frame, completing when the network took it (or the socket is gone) */
  SocketWriter(Function<String, Future<Void>> sink, WriteBudget budget) {
    this(sink, budget, queuedNanos -> {});
  }

  /** @param completed told each completed write's {@link System#nanoTime()} when it was queued */
  SocketWriter(Function<String, Future<Void>> sink, WriteBudget budget, LongConsumer completed) {
    this.sink = sink;
    this.budget = budget;
    this.completed = completed;
  }

  /** Writes {@code frame} if it fits in the budget: its size in bytes; -1 (nothing written) if it does not. */
  int tryWrite(String frame) {
    int bytes = WriteBudget.utf8Length(frame);
    if (!budget.tryTake(bytes)) {
      return -1;
    }
    send(frame, bytes);
    return bytes;
  }

  /** Writes {@code frame} whatever the budget holds; returns its size in bytes. */
  int write(String frame) {
    int bytes = WriteBudget.utf8Length(frame);
    budget.take(bytes);
    send(frame, bytes);
    return bytes;
  }

  private void send(String frame, int bytes) {
    long queued = System.nanoTime();
    sink.apply(frame).onComplete(ar -> {
      completed.accept(queued);
      written(bytes);
    });
  }

  private void written(int bytes) {
    if (budget.give(bytes)) {
      Runnable next;
      synchronized (this) {
        next = waiting;
        waiting = null;
      }
      if (next != null) {
        next.run();
      }
    }
  }

  /** Whether a backlog page may be read now (at most half the budget held). */
  boolean roomForPage() {
    return budget.roomForPage();
  }

  /** Runs {@code next} once, when a completed write leaves at most half the budget held. */
  void whenHalfFree(Runnable next) {
    synchronized (this) {
      waiting = next;
    }
    if (budget.roomForPage()) {
      // Drained between the caller's check and now: no write is left to run it.
      Runnable now;
      synchronized (this) {
        now = waiting;
        waiting = null;
      }
      if (now != null) {
        now.run();
      }
    }
  }

  long free() {
    return budget.free();
  }

  long limit() {
    return budget.limit();
  }

  /** The socket is gone: its bytes are given back, nothing waits. */
  void clear() {
    synchronized (this) {
      waiting = null;
    }
    budget.clear();
  }
}
