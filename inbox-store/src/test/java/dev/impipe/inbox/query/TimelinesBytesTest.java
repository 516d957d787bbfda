package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.avro.InboxEntry;
import dev.impipe.avro.InboxEntryType;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.OptionalLong;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.junit.jupiter.api.Test;

/**
 * Timeline pages cut by bytes as well as by count: the store is read only as far as the page needs, a page holds at
 * least one entry, and paging on from {@code next} reads everything once.
 */
class TimelinesBytesTest {

  /** bob's inbox: ten entries of 10 bytes each (seqs 0..9). */
  private static MemoryStoreView<String> tenEntries() {
    MemoryStoreView<String> inbox = new MemoryStoreView<>();
    for (int i = 0; i < 10; i++) {
      inbox.entry("bob", i, "entry-" + i + "-".repeat(10 - ("entry-" + i).length()));
    }
    return inbox;
  }

  @Test
  void aSyncPageHoldsWhatFitsTheBudgetAndPagingOnReadsEverythingOnce() {
    // Given ten entries of 10 bytes and a budget of 35 bytes
    MemoryStoreView<String> inbox = tenEntries();
    List<Long> seen = new ArrayList<>();
    long after = Timelines.START;
    boolean more = true;
    int pages = 0;
    while (more) {
      // When pages of up to 100 entries are read after the previous page's next
      Page<String> page = Timelines.after(inbox, "bob", after, 100, String::length, 35);
      page.entries().forEach(e -> seen.add(e.seq()));
      after = page.next();
      more = page.hasMore();
      pages++;
      // Then each holds three entries (30 bytes) but the last
      assertThat(page.entries().size()).isLessThanOrEqualTo(3);
    }
    assertThat(pages).isEqualTo(4);
    assertThat(seen).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
  }

  @Test
  void aHistoryPageIsCutTooNewestFirst() {
    Page<String> page = Timelines.before(tenEntries(), "bob", OptionalLong.empty(), 100, 0, String::length, 25);
    assertThat(page.entries()).extracting(Page.Entry::seq).containsExactly(9L, 8L);
    assertThat(page.next()).isEqualTo(8L);
    assertThat(page.hasMore()).isTrue();
    Page<String> one = Timelines.before(tenEntries(), "bob", OptionalLong.of(8), 100, 0, String::length, 1);
    assertThat(one.entries()).extracting(Page.Entry::seq).containsExactly(7L);
    assertThat(one.hasMore()).isTrue();
  }

  @Test
  void theStoreIsReadOnlyOneEntryPastTheBudget() {
    // Given an iterator over 1,000 entries of 10 bytes that counts what is taken from it
    int[] taken = {0};
    Iterator<KeyValue<Bytes, String>> it = new Iterator<>() {
      @Override
      public boolean hasNext() {
        return taken[0] < 1_000;
      }

      @Override
      public KeyValue<Bytes, String> next() {
        taken[0]++;
        return KeyValue.pair(Bytes.wrap(new byte[] {1}), "0123456789");
      }
    };

    // When at most 1,001 are asked for with a budget of 50 bytes
    List<KeyValue<Bytes, String>> read = StoreView.take(it, 1_001, String::length, 50);

    // Then six are read: five that fit and one to know that more lie beyond
    assertThat(read).hasSize(6);
    assertThat(taken[0]).isEqualTo(6);
  }

  @Test
  void aGroupTimelineReadInsideRangesIsCutByBytesToo() {
    // Given a group timeline of 20 messages with 1,000-character bodies, bob reading conversation seqs [0, 100)
    MemoryStoreView<InboxEntry> timeline = new MemoryStoreView<>();
    for (int i = 0; i < 20; i++) {
      timeline.entry("#g", i, InboxEntry.newBuilder().setUserId("#g").setType(InboxEntryType.MESSAGE)
          .setConversationId("g").setConversationSeq(i).setMessageId("m" + i).setSenderId("amy")
          .setBody("x".repeat(1_000)).setTimestamp(Instant.EPOCH).build());
    }
    long one = JsonSize.entry(timeline.range(Bytes.wrap(new byte[0]), Bytes.wrap(new byte[] {(byte) 0xff}), false,
        1).get(0).value);

    // When it is read with room for three entries
    Page<InboxEntry> page = Timelines.within(timeline, "#g", Timelines.START, List.of(new long[] {0, 100}), 100,
        3 * one + 10);

    // Then three go out and the rest is said to be there
    assertThat(page.entries()).extracting(Page.Entry::seq).containsExactly(0L, 1L, 2L);
    assertThat(page.next()).isEqualTo(2L);
    assertThat(page.hasMore()).isTrue();
  }
}
