package dev.impipe.inbox.query;

import dev.impipe.inbox.internal.MembershipMaterialiser;
import dev.impipe.inbox.internal.StoreKeys;
import dev.impipe.runtime.domain.Ids;
import java.util.OptionalLong;

/**
 * Who may read a conversation's history, and from where: a direct chat
 * {@code d:<a>:<b>} only its two parties, all of it; a group only its current members, from the conversation seq
 * at which they (last) joined; a large group's own timeline ({@code #g}) never through history.
 *
 * <p>The memberships view is the store {@code InboxStoreTopology.MEMBERSHIPS_STORE} of the USER's partition
 * (im.inbox), which may live on another instance than the conversation's timeline.
 */
public final class HistoryAccess {

  private HistoryAccess() {}

  /**
   * The first conversation seq {@code user} may read in {@code conversationId}; empty when they may read none of
   * it. Pass the result to {@link Timelines#before(StoreView, String, OptionalLong, int, long)}.
   */
  public static OptionalLong from(StoreView<byte[]> memberships, String user, String conversationId) {
    if (user == null || conversationId == null || Ids.isGroupTimeline(conversationId)) {
      return OptionalLong.empty();
    }
    if (Ids.isDirect(conversationId)) {
      return isParty(user, conversationId) ? OptionalLong.of(0) : OptionalLong.empty();
    }
    return memberships.get(StoreKeys.userGroup(user, conversationId))
        .map(v -> OptionalLong.of(MembershipMaterialiser.decode(v)))
        .orElse(OptionalLong.empty());
  }

  private static boolean isParty(String user, String conversationId) {
    String[] parties = conversationId.substring(Ids.DIRECT_PREFIX.length()).split(":", -1);
    return parties.length == 2 && (parties[0].equals(user) || parties[1].equals(user))
        && Ids.direct(parties[0], parties[1]).equals(conversationId);
  }
}
