package dev.impipe.bench.scenario;

import dev.impipe.bench.BenchCluster;
import dev.impipe.bench.BenchOptions;
import dev.impipe.push.client.DeviceClient;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * The pipeline JVMs of {@code bench push}: one (as always) or {@code --gateways N} all-in-one instances on the same
 * broker, each with its own state directory and HTTP port and, when N > 1, {@code IM_PUSH_READ=owned}: each reads
 * only the inbox partitions of its active inbox-store tasks and sends other devices to their owner ({@code redirect}
 * frame, close 4013).
 */
final class PushGateways implements AutoCloseable {

  static final String COMPONENTS = "fanout,inbox-store,ack-timeout,push-gateway";
  /** Most instances {@code --gateways} takes: each is a JVM of up to {@code --heap-mb} on the same machine. */
  static final int MAX = 8;

  private final List<PipelineJvm> jvms;

  private PushGateways(List<PipelineJvm> jvms) {
    this.jvms = List.copyOf(jvms);
  }

  /** {@code --gateways N}: 1 (default) to {@link #MAX}. */
  static int count(BenchOptions options) {
    long n = options.fixed("gateways", 1);
    if (n < 1 || n > MAX) {
      throw new IllegalArgumentException("--gateways must be between 1 and " + MAX + ", not " + n);
    }
    return (int) n;
  }

  /**
   * The environment of instance {@code i} of {@code n} beside {@code extraEnv}: with one instance nothing more (the
   * bench as it always ran); with more, owned reads, a state directory of its own, and for all but the first a free
   * HTTP port (the first takes {@code IM_HTTP_PORT} as a single instance does).
   */
  static Map<String, String> env(int i, int n, Map<String, String> extraEnv, String stateDir, int freePort) {
    Map<String, String> env = new HashMap<>(extraEnv);
    if (n > 1) {
      env.put("IM_PUSH_READ", "owned");
      env.put("IM_STATE_DIR", stateDir);
      if (i > 0) {
        env.put("IM_HTTP_PORT", Integer.toString(freePort));
      }
    }
    return env;
  }

  /** Starts {@code n} instances side by side; returns once all are healthy. */
  static PushGateways start(BenchCluster cluster, int n, Map<String, String> extraEnv, long heapMb) throws Exception {
    List<PipelineJvm> started = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        Map<String, String> env = env(i, n, extraEnv, cluster.stateDir().resolve("gateway-" + i).toString(),
            i > 0 ? dev.impipe.embedded.FreePorts.next() : 0);
        started.add(PipelineJvm.launch(cluster, COMPONENTS, env, heapMb));
      }
      for (PipelineJvm jvm : started) {
        jvm.awaitHealthy(cluster, COMPONENTS + (n > 1 ? " (IM_PUSH_READ=owned)" : ""));
      }
    } catch (Exception | Error e) {
      started.forEach(PipelineJvm::close);
      throw e;
    }
    return new PushGateways(started);
  }

  /**
   * With more than one instance, waits until their readers together read every inbox partition once ({@code
   * im_push_reader_partitions} sums to the partition count, each instance reads some): the inbox store's placement
   * has settled, so devices connect to a cluster that does not move them.
   */
  void awaitPlacement(int partitions) throws InterruptedException {
    if (jvms.size() == 1) {
      return;
    }
    BenchCluster.await("each inbox partition read by one gateway", Duration.ofSeconds(300), () -> {
      List<Double> each = each("im_push_reader_partitions", "");
      return each.stream().mapToDouble(Double::doubleValue).sum() == partitions
          && each.stream().allMatch(p -> p > 0 || jvms.size() > partitions);
    });
  }

  /**
   * Connects {@code device} at {@code base} following up to 3 redirects to its partition's owner; a refused upgrade
   * {@code 503} (no owner while the placement moves) is tried again after a second, as its {@code Retry-After} says,
   * up to 30 times. Completes once the connection it ends on has sent the backlog.
   */
  static CompletableFuture<DeviceClient> connect(DeviceClient.Factory factory, URI base, String token, String device,
      DeviceClient.Listener listener) {
    return connect(factory, base, token, device, listener, 30);
  }

  private static CompletableFuture<DeviceClient> connect(DeviceClient.Factory factory, URI base, String token,
      String device, DeviceClient.Listener listener, int tries) {
    return factory.connectFollowing(base, token, device, listener, 3).exceptionallyCompose(e -> {
      Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      if (tries > 1 && cause instanceof DeviceClient.RefusedException r && r.status() == 503) {
        return CompletableFuture.supplyAsync(() -> null, CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS))
            .thenCompose(v -> connect(factory, base, token, device, listener, tries - 1));
      }
      return CompletableFuture.failedFuture(cause);
    });
  }

  int size() {
    return jvms.size();
  }

  /** The first instance (the one on {@code IM_HTTP_PORT}). */
  PipelineJvm first() {
    return jvms.get(0);
  }

  /** A random instance's base URI (the only one's with one instance). */
  URI any(SplittableRandom random) {
    return jvms.get(jvms.size() == 1 ? 0 : random.nextInt(jvms.size())).base;
  }

  /** {@code metric} (Prometheus samples whose labels contain {@code labelPart}) of each instance, in order. */
  List<Double> each(String metric, String labelPart) {
    return jvms.stream().map(j -> j.metric(metric, labelPart)).toList();
  }

  /** The instances' {@code /metrics} texts, one after the other (one scrape each). */
  String scrapeAll() {
    return String.join("\n", jvms.stream().map(PipelineJvm::scrape).toList());
  }

  /** {@code metric} summed over the instances. */
  double sum(String metric, String labelPart) {
    return each(metric, labelPart).stream().mapToDouble(Double::doubleValue).sum();
  }

  /** The instances' process ids, in order. */
  List<Long> pids() {
    return jvms.stream().map(j -> j.process.pid()).toList();
  }

  /** The JVMs a push's load runs through: the instances, the broker if this run started it, this one. */
  List<JitShares.Jvm> jvmsWith(BenchCluster cluster) {
    List<JitShares.Jvm> jvms = new ArrayList<>();
    pids().forEach(pid -> jvms.add(new JitShares.Jvm(size() == 1 ? "pipeline" : "pipeline " + pid, pid)));
    cluster.brokerPid().ifPresent(pid -> jvms.add(new JitShares.Jvm("broker", pid)));
    jvms.add(new JitShares.Jvm("bench", ProcessHandle.current().pid()));
    return jvms;
  }

  /** Resident set sizes of the instances together, bytes. */
  long rss() {
    return jvms.stream().mapToLong(j -> PipelineJvm.rss(j.process.pid())).sum();
  }

  /** "gateway JVM" with one instance, else "N gateway JVMs together": figures keep their one-instance names. */
  String label() {
    return jvms.size() == 1 ? "gateway JVM" : jvms.size() + " gateway JVMs together";
  }

  @Override
  public void close() {
    jvms.forEach(j -> j.process.destroy()); // all stop side by side, then each is waited for
    jvms.forEach(PipelineJvm::close);
  }
}
