package dev.impipe.bench.scenario;

import dev.impipe.bench.report.Result;
import dev.impipe.bench.report.Series;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;

/**
 * How long the transactions of the cluster stay open: every 100 ms the broker is asked for the transactions not yet
 * complete (ongoing, or committing / aborting: until their markers are written they hold back the last stable offset
 * of every partition they wrote, so a {@code read_committed} reader sees nothing after them there), and the age of
 * the oldest one is noted. One point per second: the largest age seen in it (0 when none was open at any sample).
 */
final class OpenTransactions implements AutoCloseable {

  static final long SAMPLE_MS = 100;
  private static final Set<TransactionState> OPEN =
      EnumSet.of(TransactionState.ONGOING, TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT);

  private final Admin admin;
  private final Result result;
  private final Series series;
  private final ScheduledExecutorService timer;
  private long oldestThisSecond;
  private long secondStartedAt = System.nanoTime();
  private volatile String failure;

  OpenTransactions(Admin admin, Result result, String seriesName) {
    this.admin = admin;
    this.result = result;
    this.series = result.series(seriesName, "ms");
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "bench-open-transactions");
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::sample, SAMPLE_MS, SAMPLE_MS, TimeUnit.MILLISECONDS);
  }

  private void sample() {
    try {
      List<String> ids = admin.listTransactions(new ListTransactionsOptions().filterStates(OPEN)).all()
          .get(2, TimeUnit.SECONDS).stream().map(TransactionListing::transactionalId).toList();
      long now = System.currentTimeMillis();
      if (!ids.isEmpty()) {
        Map<String, TransactionDescription> described =
            admin.describeTransactions(ids).all().get(2, TimeUnit.SECONDS);
        for (TransactionDescription d : described.values()) {
          if (OPEN.contains(d.state()) && d.transactionStartTimeMs().isPresent()) {
            oldestThisSecond = Math.max(oldestThisSecond, now - d.transactionStartTimeMs().getAsLong());
          }
        }
      }
    } catch (Exception e) {
      // A transaction that completes between the two calls, or a slow answer: the next sample tries again.
      failure = e.toString();
    }
    long t = System.nanoTime();
    if (t - secondStartedAt >= 1_000_000_000L) {
      series.add(result.elapsedSeconds(), oldestThisSecond);
      oldestThisSecond = 0;
      secondStartedAt = t;
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
    String f = failure;
    if (f != null) {
      result.note("open-transaction sampling failed at least once (last: " + f + "); those samples are missing");
    }
  }
}
