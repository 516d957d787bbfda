package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How many entries a backlog page asks for: what fits in the room of the write budget. */
class PageSizerTest {

  @Test
  void beforeAnyEntryIsSeenTheFirstPageIsSmall() {
    PageSizer sizer = new PageSizer(200, 1_600_000);
    assertThat(sizer.limit(1_600_000)).isEqualTo(PageSizer.FIRST_PAGE);
  }

  @Test
  void smallEntriesGetFullPagesAndFatOnesFewerEntries() {
    // Given a budget of 1 MB and a configured page of 200
    PageSizer sizer = new PageSizer(200, 1_000_000);

    // When the entries seen are 300 bytes: a full page fits
    sizer.seen(300);
    assertThat(sizer.limit(1_000_000)).isEqualTo(200);

    // When a 100 kB entry is seen: 10 such fit in 1 MB, 5 in half of it
    sizer.seen(100_000);
    sizer.seen(300);
    assertThat(sizer.limit(1_000_000)).isEqualTo(10);
    assertThat(sizer.limit(500_000)).isEqualTo(5);
  }

  @Test
  void atLeastOneEntryIsAlwaysAskedFor() {
    PageSizer sizer = new PageSizer(200, 1_000);
    sizer.seen(5_000);
    assertThat(sizer.limit(0)).isEqualTo(1);
    assertThat(sizer.limit(1_000)).isEqualTo(1);
  }
}
