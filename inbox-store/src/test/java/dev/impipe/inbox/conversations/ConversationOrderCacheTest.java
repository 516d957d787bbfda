package dev.impipe.inbox.conversations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-task cache of list orders (least recently requested dropped first) and the instance's caches by task. */
class ConversationOrderCacheTest {

  @Test
  void theFirstRequestBuildsLaterOnesReuse() {
    ConversationOrderCache cache = new ConversationOrderCache(2);
    // Given nobody's list was requested: the processor finds no order
    assertThat(cache.cached("alice")).isNull();

    // When alice's list is requested, that request builds her order; the next one reuses it
    ConversationOrderCache.Use first = cache.use("alice");
    assertThat(first.build()).isTrue();
    ConversationOrderCache.Use second = cache.use("alice");
    assertThat(second.build()).isFalse();
    assertThat(second.order()).isSameAs(first.order());
    assertThat(cache.cached("alice")).isSameAs(first.order());
  }

  @Test
  void theLeastRecentlyRequestedUserIsDroppedAndTheProcessorsLookupIsNoUse() {
    // Given room for two users: alice, then bob requested
    ConversationOrderCache cache = new ConversationOrderCache(2);
    cache.use("alice");
    cache.use("bob");
    // When the processor looks up alice (a write of hers), then alice is still the least recently requested
    assertThat(cache.cached("alice")).isNotNull();
    cache.use("carol");

    // Then alice is dropped, bob and carol kept
    assertThat(cache.cached("alice")).isNull();
    assertThat(cache.cached("bob")).isNotNull();
    assertThat(cache.cached("carol")).isNotNull();
    assertThat(cache.size()).isEqualTo(2);

    // When bob is requested again and dave arrives, carol (now the eldest) goes
    cache.use("bob");
    cache.use("dave");
    assertThat(cache.cached("carol")).isNull();
    assertThat(cache.cached("bob")).isNotNull();
  }

  @Test
  void aFailedBuildIsForgottenSoTheNextRequestBuildsAgain() {
    ConversationOrderCache cache = new ConversationOrderCache(2);
    ConversationOrder failed = cache.use("alice").order();

    cache.drop("alice", failed);

    assertThat(cache.cached("alice")).isNull();
    assertThat(cache.use("alice").build()).isTrue();
    // and dropping an order that is no longer the kept one leaves the kept one
    cache.drop("alice", failed);
    assertThat(cache.cached("alice")).isNotNull();
  }

  @Test
  void aTaskOpenedAgainStartsEmptyAndTheOldTasksCloseLeavesTheNewCache() {
    ConversationOrders orders = new ConversationOrders(10);
    // Given partition 3's task kept alice's order
    ConversationOrderCache before = orders.open(3);
    before.use("alice").order().load(List.of());
    assertThat(orders.of(3)).isSameAs(before);

    // When the task is initialised again (revived after a rollback) before the old one's close ran
    ConversationOrderCache after = orders.open(3);
    orders.close(3, before);

    // Then requests see the new, empty cache
    assertThat(orders.of(3)).isSameAs(after);
    assertThat(after.cached("alice")).isNull();
    // and when that task closes (migrated away), partition 3 has none: pages read every state
    orders.close(3, after);
    assertThat(orders.of(3)).isNull();
  }

  @Test
  void zeroUsersIsOff() {
    assertThat(new ConversationOrders(0).open(0)).isNull();
    assertThat(ConversationOrders.NONE.of(0)).isNull();
    ConversationOrders.NONE.close(0, null);
    assertThatThrownBy(() -> new ConversationOrders(-1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ConversationOrderCache(0)).isInstanceOf(IllegalArgumentException.class);
  }
}
