package dev.impipe.bench.scenario;

import java.util.List;

/**
 * Inbox read amplification over an interval: the bytes every gateway's reader read ({@code
 * im_push_reader_bytes_total}, key + value of each record, summed over the instances) divided by the bytes of inbox
 * records written (key + value of each committed record, as one {@code read_committed} consumer of every partition
 * sees them). Both count the same thing, so one gateway reading everything is exactly 1 and N gateways reading
 * every partition are N.
 */
record ReadAmplification(double readerBytes, double writtenBytes) {

  /** Counters at one moment: each instance's reader bytes, and the bytes written so far. */
  record Sample(List<Double> readerBytesPerInstance, long writtenBytes) {
    Sample {
      readerBytesPerInstance = List.copyOf(readerBytesPerInstance);
    }

    double readerBytes() {
      return readerBytesPerInstance.stream().mapToDouble(Double::doubleValue).sum();
    }
  }

  /** The interval from {@code start} to {@code end}; the same instances in the same order. */
  static ReadAmplification between(Sample start, Sample end) {
    if (start.readerBytesPerInstance().size() != end.readerBytesPerInstance().size()) {
      throw new IllegalArgumentException("samples of " + start.readerBytesPerInstance().size() + " and "
          + end.readerBytesPerInstance().size() + " instances");
    }
    return new ReadAmplification(end.readerBytes() - start.readerBytes(), end.writtenBytes() - start.writtenBytes());
  }

  /** Reader bytes per byte written; NaN when nothing was written. */
  double ratio() {
    return writtenBytes > 0 ? readerBytes / writtenBytes : Double.NaN;
  }
}
