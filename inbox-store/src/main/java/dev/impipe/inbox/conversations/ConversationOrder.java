package dev.impipe.inbox.conversations;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.apache.kafka.common.utils.Bytes;

/**
 * One user's conversations in list order, in memory: each conversation at its position ({@link ConversationKeys#order},
 * the bytes the list sorts by), so a page is the first positions after its cursor, not a sort of every state.
 *
 * <p>Shared by the processor that moves conversations and the requests that read pages: every method holds this
 * object's lock (a per-user lock), so a page is taken from one consistent order and never holds a conversation twice
 * nor skips one between its first and last position. The lock is held for a map update or a copy of at most a page
 * of positions, never for a store read.
 *
 * <p>Built from one scan of the user's states while the processor keeps writing: until {@link #load} the processor's
 * moves are kept aside and applied over the scan (they are newer than what the scan may have read), so no write
 * between the scan and the load is lost.
 */
public final class ConversationOrder {

  /** A conversation at its position. */
  public record Position(Bytes key, String conversation) {}

  private final TreeMap<Bytes, String> byPosition = new TreeMap<>();
  private final Map<String, Bytes> positions = new HashMap<>();
  /** Moves made while the order is being built (null once loaded). */
  private Map<String, Bytes> pending = new LinkedHashMap<>();

  /** True once {@link #load} ran: the order answers pages. */
  public synchronized boolean ready() {
    return pending == null;
  }

  /**
   * The positions a scan of the user's states read, then every move made since the order was created over them.
   *
   * @throws IllegalStateException when already loaded
   */
  public synchronized void load(List<Position> scanned) {
    if (pending == null) {
      throw new IllegalStateException("already loaded");
    }
    Map<String, Bytes> moves = pending;
    pending = null;
    for (Position p : scanned) {
      place(p.conversation(), p.key());
    }
    moves.forEach(this::place);
  }

  /** Puts {@code conversation} at {@code key} (the processor wrote its state). */
  public synchronized void move(String conversation, Bytes key) {
    if (pending != null) {
      pending.put(conversation, key);
    } else {
      place(conversation, key);
    }
  }

  /**
   * At most {@code max} positions at or after {@code from}, in order, leaving out those {@code skip} names.
   *
   * @throws IllegalStateException when not loaded yet
   */
  public synchronized List<Position> from(Bytes from, int max, Predicate<String> skip) {
    if (pending != null) {
      throw new IllegalStateException("not loaded");
    }
    List<Position> out = new ArrayList<>(Math.min(max, positions.size()));
    for (Map.Entry<Bytes, String> e : byPosition.tailMap(from, true).entrySet()) {
      if (out.size() >= max) {
        break;
      }
      if (!skip.test(e.getValue())) {
        out.add(new Position(e.getKey(), e.getValue()));
      }
    }
    return out;
  }

  /** How many conversations the order holds. */
  public synchronized int size() {
    return positions.size();
  }

  private void place(String conversation, Bytes key) {
    Bytes old = positions.put(conversation, key);
    if (old != null && !old.equals(key)) {
      byPosition.remove(old);
    }
    byPosition.put(key, conversation);
  }
}
