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
 * the bytes the list sorts by), so a page is the first positions after its cursor, not a sort of every state. With
 * each position what the conversation adds to the user's badge, so the order also answers the page's
 * {@code unreadTotal} (no stored total per user: ADR 0012).
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

  /**
   * A conversation at its position, with what it adds to the badge.
   *
   * @param badge {@link ConversationRules#badge} of its state
   * @param capped {@link ConversationRules#cappedInBadge} of its state
   */
  public record Position(Bytes key, String conversation, long badge, boolean capped) {

    /** A position that adds nothing to the badge. */
    public Position(Bytes key, String conversation) {
      this(key, conversation, 0, false);
    }
  }

  private final TreeMap<Bytes, String> byPosition = new TreeMap<>();
  private final Map<String, Position> positions = new HashMap<>();
  /** Moves made while the order is being built (null once loaded). */
  private Map<String, Position> pending = new LinkedHashMap<>();
  private long unread;
  private long capped;

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
    Map<String, Position> moves = pending;
    pending = null;
    scanned.forEach(this::place);
    moves.values().forEach(this::place);
  }

  /** Puts {@code p}'s conversation at its position, with its badge (the processor wrote its state). */
  public synchronized void move(Position p) {
    if (pending != null) {
      pending.put(p.conversation(), p);
    } else {
      place(p);
    }
  }

  /**
   * The badge over all the user's conversations: the sum of their {@link Position#badge}s, and how many are
   * {@link Position#capped}.
   *
   * @throws IllegalStateException when not loaded yet
   */
  public synchronized ConversationTotals totals() {
    if (pending != null) {
      throw new IllegalStateException("not loaded");
    }
    return new ConversationTotals(unread, capped);
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

  private void place(Position p) {
    Position old = positions.put(p.conversation(), p);
    if (old != null) {
      if (!old.key().equals(p.key())) {
        byPosition.remove(old.key());
      }
      unread -= old.badge();
      capped -= old.capped() ? 1 : 0;
    }
    byPosition.put(p.key(), p.conversation());
    unread += p.badge();
    capped += p.capped() ? 1 : 0;
  }
}
