package dev.impipe.inbox.conversations;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@link ConversationOrder}s of one inbox-store task (partition): only of users whose list was requested here,
 * at most {@code capacity}, the least recently requested dropped first. Not a state store: no changelog, nothing on
 * the write path but one hash lookup per state write ({@link #cached}), which does not count as a use.
 *
 * <p>Lives as long as its task's processor (created empty in {@code init}, dropped in {@code close}): whatever the
 * task's stores went through before (a restore, an EOS rollback) the orders are rebuilt from the stores they read.
 */
public final class ConversationOrderCache {

  /** A user's order for a request; {@code build}: this request creates it, it must {@link #load} it. */
  public record Use(ConversationOrder order, boolean build) {}

  private final int capacity;
  private final Map<String, ConversationOrder> orders = new ConcurrentHashMap<>();
  /** Users by last request, eldest first; guarded by itself. */
  private final LinkedHashMap<String, Boolean> recency = new LinkedHashMap<>(16, 0.75f, true);

  public ConversationOrderCache(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive");
    }
    this.capacity = capacity;
  }

  /** The user's order when it is kept (the processor's lookup; not a use), else null. */
  public ConversationOrder cached(String user) {
    return orders.get(user);
  }

  /**
   * The user's order for a request, created (empty, to be built by this request) when not kept; the user becomes
   * the most recently used and the least recently used beyond the capacity are dropped.
   */
  public Use use(String user) {
    synchronized (recency) {
      recency.put(user, Boolean.TRUE);
      ConversationOrder order = orders.get(user);
      boolean build = order == null;
      if (build) {
        order = new ConversationOrder();
        orders.put(user, order);
      }
      Iterator<String> eldest = recency.keySet().iterator();
      while (recency.size() > capacity) {
        orders.remove(eldest.next());
        eldest.remove();
      }
      return new Use(order, build);
    }
  }

  /** Forgets {@code order} of {@code user} (its build failed); another request builds it again. */
  public void drop(String user, ConversationOrder order) {
    synchronized (recency) {
      if (orders.remove(user, order)) {
        recency.remove(user);
      }
    }
  }

  /** Users kept. */
  public int size() {
    return orders.size();
  }
}
