package dev.impipe.inbox.query;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A page cut to a byte budget: the longest fitting prefix, at least one entry, and it says the rest. */
class PageBytesTest {

  private static Page<String> page(boolean hasMore, String... values) {
    List<Page.Entry<String>> entries = new java.util.ArrayList<>();
    for (int i = 0; i < values.length; i++) {
      entries.add(new Page.Entry<>(10 + i, values[i]));
    }
    return new Page<>(entries, entries.isEmpty() ? 5L : 10L + values.length - 1, hasMore);
  }

  private static Page<String> cut(Page<String> page, long maxBytes) {
    return PageBytes.cut(page, String::length, maxBytes);
  }

  @Test
  void aPageThatFitsIsUnchanged() {
    Page<String> page = page(false, "aaa", "bbb");
    assertThat(cut(page, 6)).isSameAs(page);
    assertThat(cut(page(false), 1)).isEqualTo(page(false));
  }

  @Test
  void aPageOverTheBudgetKeepsTheLongestFittingPrefixAndSaysTheRest() {
    // Given four entries of 4 bytes and a budget of 10 bytes
    Page<String> cut = cut(page(false, "aaaa", "bbbb", "cccc", "dddd"), 10);

    // Then two go out, next is the second's seq and hasMore is set
    assertThat(cut.entries()).extracting(Page.Entry::value).containsExactly("aaaa", "bbbb");
    assertThat(cut.next()).isEqualTo(11L);
    assertThat(cut.hasMore()).isTrue();
  }

  @Test
  void anEntryLargerThanTheBudgetGoesOutAloneSoPagingMovesOn() {
    Page<String> cut = cut(page(false, "x".repeat(100), "y"), 10);
    assertThat(cut.entries()).extracting(Page.Entry::seq).containsExactly(10L);
    assertThat(cut.next()).isEqualTo(10L);
    assertThat(cut.hasMore()).isTrue();
  }
}
