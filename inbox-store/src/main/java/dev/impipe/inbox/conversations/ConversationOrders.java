package dev.impipe.inbox.conversations;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The order caches of one instance, one per active task of the list's processor, by partition: the processor opens
 * its task's cache in {@code init} and closes it in {@code close}; a list request of a user takes the cache of the
 * user's partition (none: the task is not active here yet, or the cache is off: the page reads every state).
 */
public final class ConversationOrders {

  /** No caches: every page reads all the user's states ({@code IM_CONVERSATION_ORDER_CACHE_USERS=0}). */
  public static final ConversationOrders NONE = new ConversationOrders(0);

  private final int usersPerTask;
  private final Map<Integer, ConversationOrderCache> byPartition = new ConcurrentHashMap<>();

  /** {@code usersPerTask}: users kept per task ({@code IM_CONVERSATION_ORDER_CACHE_USERS}); 0 = off. */
  public ConversationOrders(int usersPerTask) {
    if (usersPerTask < 0) {
      throw new IllegalArgumentException("usersPerTask must not be negative");
    }
    this.usersPerTask = usersPerTask;
  }

  /**
   * A new, empty cache for the task of {@code partition}, replacing any earlier one of that partition (a task
   * initialised again starts from its stores, whatever the old cache held); null when off.
   */
  public ConversationOrderCache open(int partition) {
    if (usersPerTask == 0) {
      return null;
    }
    ConversationOrderCache cache = new ConversationOrderCache(usersPerTask);
    byPartition.put(partition, cache);
    return cache;
  }

  /** Drops {@code cache} of {@code partition} (its task closed), unless a newer one took its place. */
  public void close(int partition, ConversationOrderCache cache) {
    if (cache != null) {
      byPartition.remove(partition, cache);
    }
  }

  /** The cache of {@code partition}'s active task, or null. */
  public ConversationOrderCache of(int partition) {
    return byPartition.get(partition);
  }
}
