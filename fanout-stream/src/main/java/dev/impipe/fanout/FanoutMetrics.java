package dev.impipe.fanout;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/** What the fan-out app counts (exposed on /metrics). */
public final class FanoutMetrics {

  private final Counter messages;
  private final Counter inboxEntries;
  private final Counter duplicates;
  private final Counter rejected;
  private final Counter membershipChanges;
  private final Counter writesSaved;
  private final Counter modeSwitches;

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
