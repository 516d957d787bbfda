package dev.impipe.edge.app;

import dev.impipe.edge.http.Response;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.BooleanSupplier;
import org.apache.kafka.streams.KafkaStreams;

/**
 * Whether this instance is ready: every component has started, every Streams app has been RUNNING, and every
 * component's own readiness check passes. Answers {@code /health}.
 */
final class InstanceHealth {

  private final Map<String, KafkaStreams> streams = new ConcurrentSkipListMap<>();
  /** The apps that have been RUNNING at least once (a later REBALANCING keeps them ready, see {@link #response}). */
  private final Set<String> everRunning = ConcurrentHashMap.newKeySet();
  /** Components' own readiness checks, by name. */
  private final Map<String, BooleanSupplier> checks = new ConcurrentSkipListMap<>();
  /** Set once every component has started: before that the instance is not ready, whatever its apps say. */
  private volatile boolean started;

  /** Follows app {@code name} (before it starts: its state listener notes its first RUNNING). */
  void follow(String name, KafkaStreams app) {
    app.setStateListener((now, before) -> {
      if (now == KafkaStreams.State.RUNNING) {
        everRunning.add(name);
      }
    });
    streams.put(name, app);
  }

  void readiness(String name, BooleanSupplier ready) {
    checks.put(name, ready);
  }

  void started() {
    started = true;
  }

  /** The followed Streams apps by name. */
  Map<String, KafkaStreams> streams() {
    return java.util.Collections.unmodifiableMap(streams);
  }

  /**
   * {@code /health}: 200 once every component has started and every Streams app has been RUNNING; an app that is
   * REBALANCING after that still counts. A rebalance involves every instance of the group (one instance starting,
   * stopping or dying puts them all in REBALANCING): if that made every instance unready, a load balancer would take
   * the whole service out during each rolling restart. Requests for keys whose task is moving answer 503 with
   * Retry-After on their own.
   */
  Response response() {
    Map<String, Object> apps = new LinkedHashMap<>();
    boolean up = started;
    for (Map.Entry<String, KafkaStreams> e : streams.entrySet()) {
      KafkaStreams.State state = e.getValue().state();
      apps.put(e.getKey(), state.name());
      up &= ready(state, everRunning.contains(e.getKey()));
    }
    Map<String, Object> failing = new LinkedHashMap<>();
    checks.forEach((name, check) -> {
      if (!check.getAsBoolean()) {
        failing.put(name, "DOWN");
      }
    });
    up &= failing.isEmpty();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("status", up ? "UP" : started ? "DOWN" : "STARTING");
    body.put("streams", apps);
    if (!failing.isEmpty()) {
      body.put("checks", failing);
    }
    return Response.json(up ? 200 : 503, body);
  }

  /** Whether an app in {@code state} lets the instance be ready (see {@link #response}). */
  static boolean ready(KafkaStreams.State state, boolean hasRun) {
    return state == KafkaStreams.State.RUNNING || state == KafkaStreams.State.REBALANCING && hasRun;
  }

  /** True once every component has started and every Streams app is RUNNING. */
  boolean healthy() {
    return started && streams.values().stream().allMatch(s -> s.state() == KafkaStreams.State.RUNNING)
        && checks.values().stream().allMatch(BooleanSupplier::getAsBoolean);
  }
}
