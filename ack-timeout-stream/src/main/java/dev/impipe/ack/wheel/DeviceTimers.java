package dev.impipe.ack.wheel;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The wheel state of one (user, device), pure: its highest ACK and its pending seqs as runs (consecutive seqs
 * sharing a slot, an attempt count and a first push), in seq order without overlaps. One record per device replaces
 * a timer per seq: a push extends the last run or adds one, a cumulative ACK trims the prefix, and the expiry of a
 * slot turns the runs filed under it into timeouts or rearms them ({@link WheelRules#expire} per run).
 *
 * <p>Bounded: at most {@code maxPending} pending seqs (so at most as many runs); a delivery that would go over is
 * refused ({@link Delivered#refused()}) and left to the caller to reject, the record unchanged.
 */
final class DeviceTimers {

  /** No ACK seen for the device. */
  static final long NO_ACK = Long.MIN_VALUE;

  /**
   * Pending seqs {@code fromSeq..toSeq}: filed under {@code slot}, pushed first at {@code firstPushedAt} (the
   * earliest of the run), the current attempt timing out from {@code deadline} (the earliest of the run) to
   * {@code lastDeadline} (the latest), {@code attempts} pushes so far.
   */
  record Run(long fromSeq, long toSeq, long slot, long firstPushedAt, long deadline, long lastDeadline,
      int attempts) {

    Run {
      if (toSeq < fromSeq) {
        throw new IllegalArgumentException("run " + fromSeq + ".." + toSeq);
      }
    }

    long size() {
      return toSeq - fromSeq + 1;
    }

    Run seqs(long from, long to) {
      return new Run(from, to, slot, firstPushedAt, deadline, lastDeadline, attempts);
    }

    /** Whether {@code next} follows this run and may join it (same slot and attempt count). */
    boolean joins(Run next) {
      return toSeq != Long.MAX_VALUE && next.fromSeq == toSeq + 1 && next.slot == slot
          && next.attempts == attempts;
    }

    Run join(Run next) {
      return new Run(fromSeq, next.toSeq, slot, Math.min(firstPushedAt, next.firstPushedAt),
          Math.min(deadline, next.deadline), Math.max(lastDeadline, next.lastDeadline), attempts);
    }
  }

  /**
   * What a delivery did.
   *
   * @param added seqs newly pending
   * @param ignored seqs left out because the device had ACKed them already
   * @param refused true if the device would hold more pending seqs than allowed (nothing changed)
   */
  record Delivered(long added, long ignored, boolean refused) {}

  /**
   * What expiring a slot did.
   *
   * @param timeouts the runs that timed out (their state before expiry) with whether each is final
   * @param seqs seqs handled (timed out or moved to a later slot), counted against the round's budget
   * @param rest whether runs of the slot are left (the budget ran out)
   */
  record Expired(List<TimedOut> timeouts, long seqs, boolean rest) {}

  /** A run that timed out; {@code isFinal}: no redelivery follows. */
  record TimedOut(Run run, boolean isFinal) {}

  /** The timing rules an expiry applies. */
  record Policy(long timeoutMs, int maxAttempts, long slotMs) {}

  private static final java.util.Comparator<Run> BY_SEQ = java.util.Comparator.comparingLong(Run::fromSeq);

  private long ackedSeq;
  private long ackedAt;
  private final List<Run> runs;

  DeviceTimers(long ackedSeq, long ackedAt, List<Run> runs) {
    this.ackedSeq = ackedSeq;
    this.ackedAt = ackedAt;
    this.runs = new ArrayList<>(runs);
  }

  static DeviceTimers empty() {
    return new DeviceTimers(NO_ACK, 0, List.of());
  }

  long ackedSeq() {
    return ackedSeq;
  }

  long ackedAt() {
    return ackedAt;
  }

  List<Run> runs() {
    return Collections.unmodifiableList(runs);
  }

  /** Seqs waiting for their ACK. */
  long pendingSeqs() {
    long n = 0;
    for (Run r : runs) {
      n += r.size();
    }
    return n;
  }

  /** Seqs filed under {@code slot} or earlier: what expiring that slot handles. */
  long dueSeqs(long slot) {
    long n = 0;
    for (Run r : runs) {
      n += r.slot() <= slot ? r.size() : 0;
    }
    return n;
  }

  /** The slots this device has runs in: exactly its keys in the slot store. */
  Set<Long> slots() {
    Set<Long> slots = new TreeSet<>();
    for (Run r : runs) {
      slots.add(r.slot());
    }
    return slots;
  }

  /** Whether the record holds nothing worth keeping: no run and no ACK. */
  boolean isEmpty() {
    return runs.isEmpty() && ackedSeq == NO_ACK;
  }

  /**
   * A push of {@code fromSeq..toSeq}, filed under {@code slot} with {@code deadline}, attempt {@code attempt}. Seqs
   * at or below the highest ACK are left out (the ACK overtook its delivery); a seq already pending is re-filed
   * with the new slot and deadline, keeping its first push and the higher attempt count (a redelivery).
   */
  Delivered deliver(long fromSeq, long toSeq, long slot, long pushedAt, long deadline, int attempt,
      long maxPending) {
    long from = ackedSeq == NO_ACK ? fromSeq : Math.max(fromSeq, ackedSeq + 1);
    if (from > toSeq) {
      return new Delivered(0, toSeq - fromSeq + 1, false);
    }
    long ignored = from - fromSeq;
    Run fresh = new Run(from, toSeq, slot, pushedAt, deadline, deadline, attempt);
    List<Run> next = new ArrayList<>(runs.size() + 3);
    long covered = 0;
    long cursor = from;
    boolean filled = false;
    for (Run r : runs) {
      if (r.toSeq() < from || r.fromSeq() > toSeq) {
        next.add(r);
        continue;
      }
      if (r.fromSeq() < from) {
        next.add(r.seqs(r.fromSeq(), from - 1));
      }
      long lo = Math.max(r.fromSeq(), from);
      long hi = Math.min(r.toSeq(), toSeq);
      if (lo > cursor) {
        next.add(fresh.seqs(cursor, lo - 1));
      }
      // A redelivery: the new deadline, the first push and the most attempts of both.
      next.add(new Run(lo, hi, slot, Math.min(r.firstPushedAt(), pushedAt), deadline, deadline,
          Math.max(r.attempts(), attempt)));
      covered += hi - lo + 1;
      filled = hi == toSeq;
      cursor = filled ? hi : hi + 1;
      if (r.toSeq() > toSeq) {
        next.add(r.seqs(toSeq + 1, r.toSeq()));
      }
    }
    if (!filled) {
      next.add(fresh.seqs(cursor, toSeq));
    }
    long added = toSeq - from + 1 - covered;
    if (pendingSeqs() + added > maxPending) {
      return new Delivered(0, ignored, true);
    }
    next.sort(BY_SEQ);
    List<Run> joined = join(next);
    runs.clear();
    runs.addAll(joined);
    return new Delivered(added, ignored, false);
  }

  private static List<Run> join(List<Run> sorted) {
    List<Run> out = new ArrayList<>(sorted.size());
    for (Run r : sorted) {
      int last = out.size() - 1;
      if (last >= 0 && out.get(last).joins(r)) {
        out.set(last, out.get(last).join(r));
      } else {
        out.add(r);
      }
    }
    return out;
  }

  /**
   * A cumulative ACK of {@code seq} at {@code now}: every pending seq up to it goes; the highest ACK (and its time,
   * which keeps the record for the ACKed retention) moves up, never down. Returns the seqs removed.
   */
  long ack(long seq, long now) {
    if (ackedSeq != NO_ACK && seq < ackedSeq) {
      return 0;
    }
    ackedSeq = seq;
    ackedAt = now;
    long removed = 0;
    while (!runs.isEmpty() && runs.get(0).fromSeq() <= seq) {
      Run first = runs.get(0);
      if (first.toSeq() <= seq) {
        removed += first.size();
        runs.remove(0);
      } else {
        removed += seq - first.fromSeq() + 1;
        runs.set(0, first.seqs(seq + 1, first.toSeq()));
      }
    }
    return removed;
  }

  /**
   * Expires the runs filed under {@code slot} or earlier at {@code now}, in seq order, as far as {@code budget} seqs
   * go (a run is split where the budget ends: the rest stays in the slot for the next round). Each run comes to
   * nothing yet (its latest deadline is still ahead: back in at that deadline's slot), a redelivery request (back
   * in with a new deadline and one more attempt) or the final timeout (gone).
   */
  Expired expire(long slot, long now, Policy policy, long budget) {
    List<TimedOut> out = new ArrayList<>();
    List<Run> next = new ArrayList<>(runs.size());
    long used = 0;
    boolean rest = false;
    for (Run r : runs) {
      if (r.slot() > slot) {
        next.add(r);
        continue;
      }
      Run run = r;
      if (used + run.size() > budget) {
        long take = budget - used;
        if (take <= 0) {
          rest = true;
          next.add(run);
          continue;
        }
        next.add(run.seqs(run.fromSeq() + take, run.toSeq()));
        run = run.seqs(run.fromSeq(), run.fromSeq() + take - 1);
        rest = true;
      }
      used += run.size();
      if (run.lastDeadline() > now) {
        // Filed by a wheel with wider slots (a larger IM_ACK_TICK before a restart): never early.
        next.add(new Run(run.fromSeq(), run.toSeq(), WheelRules.slotOf(run.lastDeadline(), policy.slotMs()),
            run.firstPushedAt(), run.deadline(), run.lastDeadline(), run.attempts()));
      } else if (run.attempts() >= policy.maxAttempts()) {
        out.add(new TimedOut(run, true));
      } else {
        long deadline = now + policy.timeoutMs();
        out.add(new TimedOut(run, false));
        next.add(new Run(run.fromSeq(), run.toSeq(), WheelRules.slotOf(deadline, policy.slotMs()),
            run.firstPushedAt(), deadline, deadline, run.attempts() + 1));
      }
    }
    next.sort(BY_SEQ);
    runs.clear();
    runs.addAll(join(next));
    return new Expired(out, used, rest);
  }
}
