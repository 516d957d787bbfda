package dev.impipe.cli.grow;

import dev.impipe.inbox.InboxStoreTopology;
import dev.impipe.inbox.conversations.ConversationTopology;
import dev.impipe.inbox.query.ReadIntervals;
import dev.impipe.runtime.streams.OrderedKey;
import dev.impipe.runtime.topics.ApplicationIds;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongUnaryOperator;

/**
 * The inbox store's state that outlives the inbox's retention, carried from generation g to g+1 by copying the
 * stores' changelogs (ADR 0014): the inbox store of g+1 runs under its own application id and would otherwise
 * rebuild them from the 7 retained days only. Store by store ({@code inbox-store}):
 * <ul>
 *   <li>{@code conversation-states} (the conversation list: member, muted, pinned, read marker, unread, last
 *       message): carried; its seqs are conversation seqs (positions in {@code im.messages}, the same in every
 *       generation), copied unchanged;
 *   <li>{@code conversation-memberships} (from which conversation seq a member reads a group's history): carried
 *       unchanged, for the same reason;
 *   <li>{@code large-groups} (a user's read-diffused intervals): carried, each interval's {@code openedAt} /
 *       {@code closedAt} (inbox seqs of the JOINED / LEFT / MODE entries) translated like a cursor;
 *   <li>not carried: {@code inbox-entries} with its indexes and counts (rebuilt from the copied inbox),
 *       {@code device-cursors} and {@code device-cursor-commits} (rebuilt from the translated cursor topic), the
 *       conversation history stores (keyed by conversation, rebuilt from {@code im.history}).
 * </ul>
 * Every carried store's key starts with the user id ({@code StoreKeys.userGroup}, {@code ConversationKeys.state}):
 * a record goes to the partition of g+1 that holds its user's inbox. Pure.
 */
public final class CarriedStores {

  /** A carried store; {@code inboxSeqs}: its values hold inbox seqs to translate. */
  public record Store(String name, boolean inboxSeqs) {}

  public static final List<Store> STORES = List.of(new Store(ConversationTopology.STATES_STORE, false),
      new Store(InboxStoreTopology.MEMBERSHIPS_STORE, false), new Store(InboxStoreTopology.LARGE_GROUPS_STORE, true));

  private static final String APP = "inbox-store";

  private CarriedStores() {}

  /** {@code <prefix>inbox-store[.g<g>]-<store>-changelog}: the changelog Kafka Streams keeps for the store. */
  public static String changelog(String topicPrefix, int generation, String store) {
    return ApplicationIds.applicationId(topicPrefix, APP, generation) + "-" + store + "-changelog";
  }

  /** The store a changelog of generation {@code generation} belongs to. */
  public static Optional<Store> storeOf(String topicPrefix, int generation, String changelog) {
    return STORES.stream().filter(s -> changelog(topicPrefix, generation, s.name()).equals(changelog)).findFirst();
  }

  /**
   * The user id a store key starts with, as the bytes the inbox's String key serializes to (what the partition is
   * computed from); empty for a key that is not one.
   */
  public static Optional<byte[]> userOf(byte[] key) {
    if (key == null) {
      return Optional.empty();
    }
    try {
      String user = OrderedKey.read(key).string();
      return user.isEmpty() ? Optional.empty() : Optional.of(user.getBytes(StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /** The inbox seqs a {@code large-groups} value holds (to translate), none for a tombstone. */
  public static List<Long> inboxSeqs(byte[] largeGroupsValue) {
    List<Long> out = new ArrayList<>();
    Optional<ReadIntervals> intervals = decode(largeGroupsValue);
    if (intervals.isEmpty()) {
      return out;
    }
    for (ReadIntervals.Interval i : intervals.get().intervals()) {
      out.add(i.openedAt());
      if (!i.open()) {
        out.add(i.closedAt());
      }
    }
    return out;
  }

  /**
   * A {@code large-groups} value with its inbox seqs translated ({@code translate}: old seq to new, see
   * {@link SeqTranslation}); the open sentinel ({@link Long#MAX_VALUE}) stays. A tombstone stays one, and a value
   * that does not decode is copied as it is (the store quarantines it as it did before).
   */
  public static byte[] translateLargeGroups(byte[] value, LongUnaryOperator translate) {
    Optional<ReadIntervals> intervals = decode(value);
    if (intervals.isEmpty()) {
      return value;
    }
    List<ReadIntervals.Interval> out = new ArrayList<>();
    for (ReadIntervals.Interval i : intervals.get().intervals()) {
      out.add(new ReadIntervals.Interval(i.from(), i.to(), translate.applyAsLong(i.openedAt()),
          i.open() ? i.closedAt() : translate.applyAsLong(i.closedAt()), i.closedTime()));
    }
    return new ReadIntervals(out).encode();
  }

  private static Optional<ReadIntervals> decode(byte[] value) {
    if (value == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(ReadIntervals.decode(value));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }
}
