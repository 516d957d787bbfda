package dev.impipe.bench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A hand-written SVG of one run: the rate series over time (records/s), the latency histograms' p99 of each second
 * over time, the other series (pending, lag, ...) over time, and the latency percentiles of each histogram as bars
 * on a log scale. No chart library.
 */
final class SvgChart {

  private static final int WIDTH = 900;
  private static final int PANEL_H = 260;
  private static final int LEFT = 90;
  private static final int RIGHT = 30;
  private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
  private static final double[] PERCENTILES = {50, 90, 99, 99.9};

  private SvgChart() {}

  static String render(Result result) {
    List<Series> rates = new ArrayList<>();
    List<Series> timeShares = new ArrayList<>();
    List<Series> overTime = new ArrayList<>();
    List<Series> others = new ArrayList<>();
    // Milliseconds per second (CPU, GC, commit time) get a panel of their own: on the records/s axis (hundreds of
    // thousands) their 0-2,000 would lie flat on the bottom line.
    result.seriesMap().values().forEach(s -> (s.name().endsWith(Result.LATENCY_SERIES_SUFFIX) ? overTime
        : s.unit().equals("ms/s") ? timeShares : s.unit().endsWith("/s") ? rates : others).add(s));
    Map<String, LatencyRecorder> latencies = result.latencyMap();
    int linePanels = (rates.isEmpty() ? 0 : 1) + (timeShares.isEmpty() ? 0 : 1) + (overTime.isEmpty() ? 0 : 1)
        + (others.isEmpty() ? 0 : 1);
    int panels = linePanels + (latencies.isEmpty() ? 0 : 1);
    int latH = 60 + latencies.size() * 5 * 14 + latencies.size() * 16;
    int height = 40 + linePanels * (PANEL_H + 40) + (latencies.isEmpty() ? 0 : latH) + (panels == 0 ? 40 : 0);
    StringBuilder svg = new StringBuilder();
    svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
        + "font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, height));
    svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    svg.append(text(LEFT, 24, "bench " + esc(result.scenario()), "font-size=\"16\" font-weight=\"bold\""));
    int y = 40;
    if (!rates.isEmpty()) {
      lines(svg, rates, "throughput over time", y);
      y += PANEL_H + 40;
    }
    if (!timeShares.isEmpty()) {
      lines(svg, timeShares, "time used per second (CPU, GC, commits)", y);
      y += PANEL_H + 40;
    }
    if (!overTime.isEmpty()) {
      lines(svg, overTime, "latency over time (p99 of the samples of each second)", y);
      y += PANEL_H + 40;
    }
    if (!others.isEmpty()) {
      lines(svg, others, "state over time", y);
      y += PANEL_H + 40;
    }
    if (!latencies.isEmpty()) {
      bars(svg, latencies, y);
    }
    if (panels == 0) {
      svg.append(text(LEFT, 60, "nothing measured", ""));
    }
    svg.append("</svg>\n");
    return svg.toString();
  }

  private static void lines(StringBuilder svg, List<Series> series, String title, int top) {
    int plotTop = top + 30;
    int plotH = PANEL_H - 40;
    int plotW = WIDTH - LEFT - RIGHT;
    double maxX = 1;
    double maxY = 1;
    for (Series s : series) {
      for (double[] p : s.points()) {
        maxX = Math.max(maxX, p[0]);
        maxY = Math.max(maxY, p[1]);
      }
    }
    maxY = niceCeil(maxY);
    svg.append(text(LEFT, top + 14, esc(title), "font-weight=\"bold\""));
    axes(svg, plotTop, plotH, plotW);
    // Axis units: seconds since the scenario started; the series' own units on y (listed in the legend).
    List<String> units = series.stream().map(Series::unit).distinct().toList();
    svg.append(text(LEFT + plotW / 2, plotTop + plotH + 32, "time since the scenario started (s)",
        "text-anchor=\"middle\""));
    svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" transform=\"rotate(-90 %d %d)\" "
        + "text-anchor=\"middle\">%s</text>%n", 16, plotTop + plotH / 2, 16, plotTop + plotH / 2,
        esc(String.join(", ", units))));
    for (int i = 0; i <= 4; i++) {
      double v = maxY * i / 4;
      int yy = plotTop + plotH - (int) (plotH * i / 4.0);
      svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eee\"/>\n",
          LEFT, yy, LEFT + plotW, yy));
      svg.append(text(LEFT - 6, yy + 4, Result.format(v), "text-anchor=\"end\""));
    }
    for (int i = 0; i <= 5; i++) {
      double x = maxX * i / 5;
      int xx = LEFT + (int) (plotW * i / 5.0);
      svg.append(text(xx, plotTop + plotH + 16, String.format(Locale.ROOT, "%.0fs", x), "text-anchor=\"middle\""));
    }
    int legendX = LEFT + 10;
    for (int k = 0; k < series.size(); k++) {
      Series s = series.get(k);
      String color = COLORS[k % COLORS.length];
      StringBuilder pts = new StringBuilder();
      for (double[] p : s.points()) {
        pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", LEFT + plotW * p[0] / maxX,
            plotTop + plotH - plotH * p[1] / maxY));
      }
      svg.append("<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"").append(color).append("\" points=\"")
          .append(pts.toString().trim()).append("\"/>\n");
      if (s.points().size() <= 3) {
        // A line of one point draws nothing: mark each point so a short series is still seen.
        for (double[] p : s.points()) {
          svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
              LEFT + plotW * p[0] / maxX, plotTop + plotH - plotH * p[1] / maxY, color));
        }
      }
      String label = esc(s.name() + " (" + s.unit() + ")");
      svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>\n",
          legendX, plotTop + 4 + k * 16, color));
      svg.append(text(legendX + 14, plotTop + 13 + k * 16, label, ""));
    }
  }

  private static void bars(StringBuilder svg, Map<String, LatencyRecorder> latencies, int top) {
    svg.append(text(LEFT, top + 14, "latency percentiles (log scale)", "font-weight=\"bold\""));
    double maxV = 1;
    for (LatencyRecorder h : latencies.values()) {
      maxV = Math.max(maxV, h.max());
    }
    double logMax = Math.log10(niceCeil(maxV) + 1);
    int plotW = WIDTH - LEFT - RIGHT - 200;
    int x0 = LEFT + 120;
    int y = top + 30;
    int k = 0;
    for (Map.Entry<String, LatencyRecorder> e : latencies.entrySet()) {
      LatencyRecorder h = e.getValue();
      String color = COLORS[k++ % COLORS.length];
      svg.append(text(LEFT - 60, y + 10, esc(e.getKey() + " (n=" + h.count() + ")"), "font-weight=\"bold\""));
      y += 14;
      List<Object[]> rows = new ArrayList<>();
      for (double p : PERCENTILES) {
        rows.add(new Object[] {"p" + Result.format(p), h.percentile(p)});
      }
      rows.add(new Object[] {"max", h.max()});
      for (Object[] row : rows) {
        long v = (Long) row[1];
        int w = (int) Math.max(1, plotW * Math.log10(v + 1) / logMax);
        svg.append(text(x0 - 6, y + 10, (String) row[0], "text-anchor=\"end\""));
        svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"11\" fill=\"%s\"/>\n",
            x0, y, w, color));
        svg.append(text(x0 + w + 6, y + 10, v + " " + esc(h.unit()), ""));
        y += 14;
      }
      y += 16;
    }
  }

  private static void axes(StringBuilder svg, int plotTop, int plotH, int plotW) {
    svg.append(String.format(Locale.ROOT,
        "<path d=\"M%d %d V%d H%d\" fill=\"none\" stroke=\"#333\"/>\n", LEFT, plotTop, plotTop + plotH,
        LEFT + plotW));
  }

  private static double niceCeil(double v) {
    double magnitude = Math.pow(10, Math.floor(Math.log10(Math.max(v, 1e-9))));
    for (double step : new double[] {1, 2, 2.5, 5, 10}) {
      if (step * magnitude >= v) {
        return step * magnitude;
      }
    }
    return 10 * magnitude;
  }

  private static String text(int x, int y, String content, String attrs) {
    return String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" %s>%s</text>\n", x, y, attrs, content);
  }

  private static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
