package dev.impipe.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class MemoryBreakdownTest {

  /** The head of a real {@code jcmd PID VM.native_memory summary} from OpenJDK 17 (trimmed). */
  private static final String SUMMARY = """
      Native Memory Tracking:

      (Omitting categories weighting less than 1KB)

      Total: reserved=3841209KB, committed=512345KB
      -                 Java Heap (reserved=2097152KB, committed=262144KB)
                                  (mmap: reserved=2097152KB, committed=262144KB)

      -                     Class (reserved=1056913KB, committed=9873KB)
                                  (classes #12345)

      -                    Thread (reserved=60012KB, committed=5432KB)
                                  (thread #58)
      """;

  @Test
  void readsTheTotalAndEachCategoryCommitted() {
    Map<String, Long> m = MemoryBreakdown.parseNmt(SUMMARY);
    assertThat(m).containsEntry("nmt total", 512_345L * 1024)
        .containsEntry("nmt java heap", 262_144L * 1024)
        .containsEntry("nmt class", 9_873L * 1024)
        .containsEntry("nmt thread", 5_432L * 1024)
        .hasSize(4);
  }

  @Test
  void nothingWithoutATotal() {
    assertThat(MemoryBreakdown.parseNmt("Native memory tracking is not enabled")).isEmpty();
  }
}
