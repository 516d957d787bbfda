package dev.impipe.notify.send;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;

/** Items waiting for their next attempt, by due time (ties in insertion order). Not thread-safe. */
public final class RetryQueue<T> {

  private record Entry<T>(Instant due, long order, T item) {}

  private final PriorityQueue<Entry<T>> queue = new PriorityQueue<>((a, b) -> {
    int byDue = a.due().compareTo(b.due());
    return byDue != 0 ? byDue : Long.compare(a.order(), b.order());
  });
  private long order;

  public void add(T item, Instant due) {
    queue.add(new Entry<>(due, order++, item));
  }

  /** Removes and returns up to {@code max} items due at {@code now}, earliest first. */
  public List<T> takeDue(Instant now, int max) {
    List<T> due = new ArrayList<>();
    while (due.size() < max && !queue.isEmpty() && !queue.peek().due().isAfter(now)) {
      due.add(queue.poll().item());
    }
    return due;
  }

  /** When the earliest item is due. */
  public Optional<Instant> nextDue() {
    return Optional.ofNullable(queue.peek()).map(Entry::due);
  }

  public int size() {
    return queue.size();
  }
}
