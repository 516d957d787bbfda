package dev.impipe.bench.scenario;

import dev.impipe.bench.report.LatencyRecorder;
import dev.impipe.bench.report.PromHistogram;
import dev.impipe.bench.report.Result;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where each false timeout of {@code bench push} came from: every Ack record written (per user: seq, record time),
 * every seq a device received (and at once ACKed) and every timed-out seq, to tell at the end whether a false
 * timeout's Ack was written before its deadline (the wheel fired too soon) or after (it was late upstream).
 */
final class FalseTimeouts {

  private record TimedOut(String user, long seq, long deadline) {}

  private final ConcurrentHashMap<String, List<long[]>> ackRecords = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, Long> received = new ConcurrentHashMap<>();
  private final List<TimedOut> timedOut = Collections.synchronizedList(new ArrayList<>());
  private final LatencyRecorder ackedBeforeDeadline;

  FalseTimeouts(Result result) {
    ackedBeforeDeadline = result.latency("timed-out seq: received and ACKed this long before the deadline", "ms");
  }

  void timedOut(String user, long seq, long deadlineMs) {
    timedOut.add(new TimedOut(user, seq, deadlineMs));
  }

  void ackWritten(String user, long seq, long recordTimeMs) {
    ackRecords.computeIfAbsent(user, u -> Collections.synchronizedList(new ArrayList<>()))
        .add(new long[] {seq, recordTimeMs});
  }

  /** Device {@code device} (its user's id) received inbox entry {@code seq} now. */
  void received(String device, long seq) {
    received.put(device + "/" + seq, System.currentTimeMillis());
  }

  /**
   * The figures: timed-out seqs never received, with their Ack record before / after the deadline, or none; and how
   * often the wheel's inputs waited long with records written ({@code im_ack_input_wait_seconds} of the pipeline
   * since its start): a wait of the input grace (60 s) or more lets the wheel take the input for a stuck one.
   */
  void report(Result result, PushGateways pipeline) {
    PromHistogram waits = PromHistogram.parse(pipeline.scrapeAll(), "im_ack_input_wait_seconds");
    result.figure("ACK-wheel input waits of 1 s or more (records written, none processed; whole run)", waits.count(),
        "waits");
    result.figure("ACK-wheel input waits of 15 s or more", waits.count() - waits.atOrBelow(15), "waits");
    result.figure("ACK-wheel input waits of 60 s (the input grace) or more", waits.count() - waits.atOrBelow(60),
        "waits");
    long notReceived = 0;
    long beforeDeadline = 0;
    long afterDeadline = 0;
    long noAck = 0;
    LatencyRecorder ackAfterReceive =
        result.latency("timed-out seq: its Ack record's time minus the device's receipt", "ms");
    synchronized (timedOut) {
      for (TimedOut t : timedOut) {
        long first = Long.MAX_VALUE;
        List<long[]> acks = ackRecords.getOrDefault(t.user(), List.of());
        synchronized (acks) {
          for (long[] a : acks) {
            if (a[0] >= t.seq()) {
              first = Math.min(first, a[1]);
            }
          }
        }
        Long at = received.get(t.user() + "/" + t.seq());
        if (at == null) {
          notReceived++;
        } else {
          ackedBeforeDeadline.record(Math.max(0, t.deadline() - at));
        }
        if (first == Long.MAX_VALUE) {
          noAck++;
        } else {
          if (first < t.deadline()) {
            beforeDeadline++;
          } else {
            afterDeadline++;
          }
          if (at != null) {
            ackAfterReceive.record(Math.max(0, first - at));
          }
        }
      }
    }
    result.figure("timed-out seqs the device never received", notReceived, "seqs");
    result.figure("timed-out seqs whose Ack record was written before the deadline", beforeDeadline, "seqs");
    result.figure("timed-out seqs whose Ack record was written after the deadline", afterDeadline, "seqs");
    result.figure("timed-out seqs without an Ack record", noAck, "seqs");
  }
}
