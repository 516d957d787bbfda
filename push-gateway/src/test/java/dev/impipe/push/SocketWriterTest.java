package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/** Frames against the socket's budget: what fits goes, a waiting page continues when half is free. */
class SocketWriterTest {

  private final List<String> frames = new ArrayList<>();
  private final List<Promise<Void>> writes = new ArrayList<>();
  private final LongAdder total = new LongAdder();

  private Future<Void> sink(String frame) {
    frames.add(frame);
    Promise<Void> p = Promise.promise();
    writes.add(p);
    return p.future();
  }

  @Test
  void aFrameThatDoesNotFitIsNotWrittenUntilEarlierWritesComplete() {
    // Given a 10-byte budget holding an unflushed 8-byte frame
    SocketWriter writer = new SocketWriter(this::sink, new WriteBudget(10, total));
    assertThat(writer.tryWrite("12345678")).isEqualTo(8);

    // Then a 3-byte reply does not fit and is not written
    assertThat(writer.tryWrite("abc")).isEqualTo(-1);
    assertThat(frames).containsExactly("12345678");

    // When the network took the first frame, it fits
    writes.get(0).complete();
    assertThat(writer.tryWrite("abc")).isEqualTo(3);
    assertThat(frames).containsExactly("12345678", "abc");
    assertThat(total.sum()).isEqualTo(3);
  }

  @Test
  void aWaitingPageContinuesOnceWhenHalfTheBudgetIsFree() {
    // Given 100 bytes budget and 90 bytes unflushed in three writes
    SocketWriter writer = new SocketWriter(this::sink, new WriteBudget(100, total));
    writer.write("x".repeat(30));
    writer.write("x".repeat(30));
    writer.write("x".repeat(30));
    assertThat(writer.roomForPage()).isFalse();
    AtomicInteger continued = new AtomicInteger();
    writer.whenHalfFree(continued::incrementAndGet);

    // When one write completes (60 held): still waiting
    writes.get(0).complete();
    assertThat(continued).hasValue(0);

    // When another completes (30 held): the page continues, once
    writes.get(1).complete();
    writes.get(2).complete();
    assertThat(continued).hasValue(1);
  }

  @Test
  void aWaitAskedForAfterTheDrainRunsAtOnce() {
    SocketWriter writer = new SocketWriter(this::sink, new WriteBudget(100, total));
    AtomicInteger continued = new AtomicInteger();
    writer.whenHalfFree(continued::incrementAndGet);
    assertThat(continued).hasValue(1);
  }

  @Test
  void failedWritesGiveTheirBytesBackAndClearingDropsTheWait() {
    SocketWriter writer = new SocketWriter(this::sink, new WriteBudget(100, total));
    writer.write("x".repeat(80));
    writes.get(0).fail("closed");
    assertThat(total.sum()).isZero();
    writer.write("x".repeat(80));
    AtomicInteger continued = new AtomicInteger();
    writer.whenHalfFree(continued::incrementAndGet);
    writer.clear();
    writes.get(1).complete();
    assertThat(continued).hasValue(0);
    assertThat(total.sum()).isZero();
  }
}
