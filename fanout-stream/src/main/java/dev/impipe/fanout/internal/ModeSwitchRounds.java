package dev.impipe.fanout.internal;

import dev.impipe.avro.InboxEntry;
import dev.impipe.fanout.FanoutMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Writes the CONVERSATION_MODE entries of diffusion-mode switches in bounded rounds. A round reads at most its budget
 * of member keys, writes their entries and stores how far it got ({@link ModeSwitch#doneThrough()}) in
 * {@code fanout-mode-switches}, all in the task's transaction: a crash loses the round's entries and its progress
 * together, and the next run resumes from the last committed round. So no transaction's work grows with a group.
 */
final class ModeSwitchRounds {

  /** Where an entry goes: {@code user}'s inbox, as a record with timestamp {@code timestamp}. */
  @FunctionalInterface
  interface Out {
    void entry(String user, InboxEntry entry, long timestamp);
  }

  /** What one pass over a switch did: entries written, and the switch still pending (null: finished). */
  record Progress(int read, int written, ModeSwitch next) {}

  private final KeyValueStore<String, byte[]> switches;
  private final KeyValueStore<Bytes, byte[]> members;
  private final FanoutMetrics metrics;
  /** False once a round found nothing pending and no switch started since (this task's store; re-checked on init). */
  private boolean maybePending = true;

  ModeSwitchRounds(KeyValueStore<String, byte[]> switches, KeyValueStore<Bytes, byte[]> members,
      FanoutMetrics metrics) {
    this.switches = switches;
    this.members = members;
    this.metrics = metrics;
  }

  /** Whether a switch of {@code groupId} is still being written (then its mode does not change again until done). */
  boolean pending(String groupId) {
    return switches.get(groupId) != null;
  }

  /**
   * Starts {@code change} of {@code groupId}: its first round (at most {@code budget} members) now, the rest by
   * {@link #round}.
   */
  void start(String groupId, ModeSwitch change, int budget, Out out) {
    Progress p = advance(groupId, change, budget, out);
    if (p.next() != null) {
      switches.put(groupId, p.next().encode());
      maybePending = true;
    }
  }

  /**
   * One round over the pending switches, in group-id order: at most {@code budget} member keys read in all. Returns
   * the number of entries written.
   */
  int round(int budget, Out out) {
    if (!maybePending) {
      return 0;
    }
    int read = 0;
    int written = 0;
    // What each switch still owes (null: finished), applied once the store's iterator is closed
    List<KeyValue<String, ModeSwitch>> passes = new ArrayList<>();
    try (KeyValueIterator<String, byte[]> it = switches.all()) {
      while (read < budget && it.hasNext()) {
        KeyValue<String, byte[]> s = it.next();
        Progress p = advance(s.key, ModeSwitch.decode(s.value), budget - read, out);
        read += Math.max(1, p.read());
        written += p.written();
        passes.add(KeyValue.pair(s.key, p.next()));
      }
    }
    if (passes.isEmpty()) {
      maybePending = false;
      return 0;
    }
    for (KeyValue<String, ModeSwitch> pass : passes) {
      if (pass.value == null) {
        switches.delete(pass.key);
      } else {
        switches.put(pass.key, pass.value.encode());
      }
    }
    return written;
  }

  /**
   * {@code userId} leaves {@code groupId} (a member since join clock {@code joinedAt}): if a pending switch still owes
   * them its entry, it goes to {@code out} now, before their CONVERSATION_LEFT entry.
   */
  void beforeLeave(String groupId, String userId, long joinedAt, BiConsumer<String, InboxEntry> out) {
    byte[] value = switches.get(groupId);
    if (value == null) {
      return;
    }
    ModeSwitch change = ModeSwitch.decode(value);
    if (change.owes(groupId, userId, joinedAt)) {
      out.accept(userId, change.entryFor(groupId, userId));
      metrics.inboxEntriesWritten(1);
    }
  }

  /** Reads up to {@code budget} member keys from where {@code change} stopped, writing the entries owed. */
  Progress advance(String groupId, ModeSwitch change, int budget, Out out) {
    int read = 0;
    int written = 0;
    String last = null;
    boolean more = false;
    try (KeyValueIterator<Bytes, byte[]> it = members.range(change.resumeFrom(groupId),
        MemberKeys.groupEnd(groupId))) {
      while (it.hasNext()) {
        if (read >= budget) {
          more = true;
          break;
        }
        KeyValue<Bytes, byte[]> member = it.next();
        read++;
        last = MemberKeys.userId(member.key);
        if (MemberKeys.joinedAt(member.value) < change.clock()) {
          out.entry(last, change.entryFor(groupId, last), change.recordTime());
          written++;
        }
      }
    }
    metrics.inboxEntriesWritten(written);
    return new Progress(read, written, more ? change.withDoneThrough(last) : null);
  }
}
