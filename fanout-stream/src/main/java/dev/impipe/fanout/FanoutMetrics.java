package dev.impipe.fanout;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/** What the fan-out app counts (exposed on /metrics). */
public final class FanoutMetrics {

  private final Counter messages;
  private final Counter inboxEntries;
  private final Counter duplicates;
  private final Counter rejected;
  private final Counter membershipChanges;
  private final Counter writesSaved;
  private final Counter modeSwitches;
  private final Counter dedupeSkipped;
  private final Counter dedupeReads;
  private final AtomicLong dedupeFilterBytes = new AtomicLong();

  public FanoutMetrics(MeterRegistry registry) {
    messages = Counter.builder("im.fanout.messages").description("source records fanned out").register(registry);
    inboxEntries = Counter.builder("im.fanout.inbox.entries").description("inbox entries written").register(registry);
    duplicates = Counter.builder("im.fanout.duplicates")
        .description("repeated clientMsgId within the dedupe window, dropped").register(registry);
    rejected = Counter.builder("im.fanout.rejected").description("records sent to the rejected topic")
        .register(registry);
    membershipChanges = Counter.builder("im.fanout.membership.changes").description("joins and leaves applied")
        .register(registry);
    writesSaved = Counter.builder("im.fanout.writes.saved")
        .description("inbox copies not written because the group is read-diffused").register(registry);
    modeSwitches = Counter.builder("im.fanout.mode.switches")
        .description("groups switching between write and read diffusion").register(registry);
    dedupeSkipped = Counter.builder("im.fanout.dedupe.skipped")
        .description("dedupe checks the Bloom filter answered (not a retry) without reading the store")
        .register(registry);
    dedupeReads = Counter.builder("im.fanout.dedupe.reads")
        .description("dedupe checks that read the store (the filter said maybe, is full, or is off)")
        .register(registry);
    Gauge.builder("im.fanout.dedupe.filter.bytes", dedupeFilterBytes, AtomicLong::get)
        .description("heap held by the dedupe Bloom filters of this process's fan-out tasks").baseUnit("bytes")
        .register(registry);
  }

  public Counter dedupeSkipped() {
    return dedupeSkipped;
  }

  public Counter dedupeReads() {
    return dedupeReads;
  }

  /** Adds {@code delta} (negative when a filter shrinks or goes) to the filters' heap. */
  public void dedupeFilterBytes(long delta) {
    dedupeFilterBytes.addAndGet(delta);
  }

  public Counter messages() {
    return messages;
  }

  public Counter duplicates() {
    return duplicates;
  }

  public Counter rejected() {
    return rejected;
  }

  public Counter membershipChanges() {
    return membershipChanges;
  }

  public Counter writesSaved() {
    return writesSaved;
  }

  public Counter modeSwitches() {
    return modeSwitches;
  }

  public void inboxEntriesWritten(int n) {
    inboxEntries.increment(n);
  }

  public double inboxEntries() {
    return inboxEntries.count();
  }
}
