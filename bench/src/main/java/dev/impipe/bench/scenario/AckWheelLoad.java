package dev.impipe.bench.scenario;

import dev.impipe.avro.Ack;
import dev.impipe.avro.Delivery;
import dev.impipe.bench.BenchCluster;
import java.time.Instant;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The load of {@code bench ackwheel}, for its warm-up rounds and its measured phase alike: deliveries to random users
 * (at a fixed rate, or in chunks as fast as the producer takes them), each on a device that never ACKs with a given
 * probability, else ACKed after a random delay under 80% of the timeout. Seqs are unique across all phases, so a
 * timeout names the phase its seq came from.
 */
final class AckWheelLoad implements AutoCloseable {

  /** What one phase sent: deliveries, ACKs and never-ACKed seqs (the timeouts it must produce). */
  record Sent(long deliveries, long acks, long neverAcked) {}

  /** Runs once per loop of the load (sampling the app's gauges). */
  interface EachLoop {
    void run() throws Exception;
  }

  private record PendingAck(long at, String user, String device, long seq) {}

  private final String deliveriesTopic;
  private final String acksTopic;
  private final KafkaProducer<String, Delivery> deliveries;
  private final KafkaProducer<String, Ack> acks;
  private final Support.SendErrors errors = new Support.SendErrors();
  private final SplittableRandom random = new SplittableRandom(7);
  private final long rate;
  private final double neverShare;
  private final long timeoutMs;
  private final int users;
  private long seq;

  /** {@code rate} deliveries/s; 0: as fast as the producer takes them ({@code --rate max}). */
  AckWheelLoad(BenchCluster cluster, long rate, double neverShare, long timeoutMs, int users) {
    this.deliveriesTopic = cluster.names().deliveries();
    this.acksTopic = cluster.names().acks();
    this.deliveries = cluster.producer(cluster.topics().deliveries().valueSerde().serializer());
    this.acks = cluster.producer(cluster.topics().acks().valueSerde().serializer());
    this.rate = rate;
    this.neverShare = neverShare;
    this.timeoutMs = timeoutMs;
    this.users = users;
  }

  /** The highest seq sent so far: every later phase's seqs are above it. */
  long lastSeq() {
    return seq;
  }

  /**
   * Sends deliveries for {@code seconds} to users {@code userPrefix + n}, then each ACK when it falls due, and flushes.
   * Never-ACKed seqs go into {@code neverAcked} (seq -> pushedAt) as they are sent; {@code sent} counts deliveries;
   * {@code eachLoop} runs once per loop (sampling).
   */
  Sent run(String userPrefix, long seconds, Map<Long, Long> neverAcked, AtomicLong sent, EachLoop eachLoop)
      throws Exception {
    boolean maxRate = rate <= 0;
    PriorityQueue<PendingAck> due = new PriorityQueue<>((a, b) -> Long.compare(a.at(), b.at()));
    Support.Pacer pacer = new Support.Pacer(maxRate ? AckWheelScenario.MAX_RATE_CHUNK : rate);
    long delivered = 0;
    long acked = 0;
    long never = 0;
    while (pacer.elapsedSeconds() < seconds || !due.isEmpty()) {
      long now = System.currentTimeMillis();
      if (pacer.elapsedSeconds() < seconds) {
        for (long k = maxRate ? AckWheelScenario.MAX_RATE_CHUNK : pacer.due(); k > 0; k--) {
          String user = userPrefix + random.nextInt(users);
          long s = ++seq;
          boolean lost = random.nextDouble() < neverShare;
          String device = lost ? "lost" : "d1";
          if (lost) {
            neverAcked.put(s, now);
            never++;
          } else {
            due.add(new PendingAck(now + 20 + random.nextLong(timeoutMs * 8 / 10 - 20), user, device, s));
          }
          deliveries.send(new ProducerRecord<>(deliveriesTopic, user,
              AckWheelScenario.delivery(user, device, s, Instant.ofEpochMilli(now))), errors);
          delivered++;
          sent.incrementAndGet();
        }
      }
      while (!due.isEmpty() && due.peek().at() <= now) {
        PendingAck a = due.poll();
        acks.send(new ProducerRecord<>(acksTopic, a.user(), new Ack(a.user(), a.device(), a.seq(),
            Instant.ofEpochMilli(now))), errors);
        acked++;
      }
      eachLoop.run();
      if (!maxRate) {
        pacer.pause();
      }
    }
    deliveries.flush();
    acks.flush();
    errors.check();
    return new Sent(delivered, acked, never);
  }

  @Override
  public void close() {
    deliveries.close();
    acks.close();
  }
}
