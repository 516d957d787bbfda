package dev.impipe.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class JitSharesTest {

  @Test
  void theShareIsTheCompilersCpuOverTheProcesssAndZeroForAnIdleProcess() {
    assertThat(JitShares.share(500, 10.0)).isEqualTo(0.05);
    assertThat(JitShares.share(0, 4.0)).isZero();
    assertThat(JitShares.share(300, 0.0)).isZero();
    // /proc and the JVM's own counter tick differently: never outside [0, 1]
    assertThat(JitShares.share(2_000, 1.0)).isEqualTo(1.0);
    assertThat(JitShares.share(-10, 1.0)).isZero();
  }

  @Test
  void aRoundIsQuietOnlyWhenEveryJvmIsUnderTheThreshold() {
    assertThat(JitShares.quiet(List.of(0.01, 0.049, 0.0))).isTrue();
    assertThat(JitShares.quiet(List.of(0.01, 0.05, 0.0))).isFalse();
    assertThat(JitShares.quiet(List.of(0.30, 0.01))).isFalse();
  }

  @Test
  void theSharesOfThisJvmAreReadFromProc() {
    JitShares shares = new JitShares(List.of(new JitShares.Jvm("bench", ProcessHandle.current().pid())));
    long sum = 0;
    for (int i = 0; i < 2_000_000; i++) {
      sum += Long.toString(i).hashCode();
    }
    List<Double> next = shares.next();
    assertThat(next).hasSize(1);
    assertThat(next.get(0)).isBetween(0.0, 1.0);
    assertThat(shares.describe(List.of(0.123))).isEqualTo("bench 12%");
    assertThat(sum).isNotZero();
  }
}
