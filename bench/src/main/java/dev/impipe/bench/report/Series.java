package dev.impipe.bench.report;

import java.util.ArrayList;
import java.util.List;

/** A named time series of (seconds since the scenario started, value) points, e.g. records per second. */
public final class Series {

  private final String name;
  private final String unit;
  private final List<double[]> points = new ArrayList<>();

  public Series(String name, String unit) {
    this.name = name;
    this.unit = unit;
  }

  public String name() {
    return name;
  }

  public String unit() {
    return unit;
  }

  public synchronized void add(double seconds, double value) {
    points.add(new double[] {seconds, value});
  }

  public synchronized List<double[]> points() {
    return List.copyOf(points);
  }
}
