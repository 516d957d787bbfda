package dev.impipe.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Where the chart puts things: the geometry worked out by hand for small inputs. */
class SvgChartTest {

  @Test
  void aRateSeriesIsDrawnToScaleWithANiceAxisAndMarkedPoints() {
    // Given one rate series: 100/s at 1 s and 300/s at 2 s
    Result r = new Result("fanout", "bin/im bench fanout");
    Series s = r.series("written", "entries/s");
    s.add(1, 100);
    s.add(2, 300);

    String svg = SvgChart.render(r);

    // Then one panel (40 + 260 + 40 high), plot 780 x 220 from (90, 70), y up to the nice ceiling of 300 = 500
    assertThat(svg).startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"340\"");
    assertThat(svg).contains("<path d=\"M90 70 V290 H870\"");
    assertThat(svg).contains("points=\"480.0,246.0 870.0,158.0\"");
    assertThat(svg).contains("<circle cx=\"480.0\" cy=\"246.0\"").contains("<circle cx=\"870.0\" cy=\"158.0\"");
    // y grid every quarter of 500, x labels every fifth of 2 s
    assertThat(svg).contains("<line x1=\"90\" y1=\"235\" x2=\"870\" y2=\"235\"")
        .contains("<text x=\"84\" y=\"239\" text-anchor=\"end\">125</text>")
        .contains("<text x=\"84\" y=\"74\" text-anchor=\"end\">500</text>")
        .contains("<text x=\"246\" y=\"306\" text-anchor=\"middle\">0s</text>")
        .contains("<text x=\"870\" y=\"306\" text-anchor=\"middle\">2s</text>");
    assertThat(svg).contains(">throughput over time</text>").contains(">written (entries/s)</text>")
        .doesNotContain("latency percentiles").doesNotContain("state over time");
  }

  @Test
  void timePerSecondHasAPanelOfItsOwnBelowTheRates() {
    // Given a rate of 200,000 entries/s and a CPU time of 1,500 ms/s
    Result r = new Result("fanout", "bin/im bench fanout");
    r.series("written", "entries/s").add(1, 200_000);
    r.series("machine CPU", "ms/s").add(1, 1_500);

    String svg = SvgChart.render(r);

    // Then two panels: the CPU's axis goes up to 2,000 (its own nice ceiling), not to the rates' 250,000
    assertThat(svg).contains("height=\"640\"");
    assertThat(svg).contains(">throughput over time</text>").contains(">written (entries/s)</text>")
        .contains(">time used per second (CPU, GC, commits)</text>").contains(">machine CPU (ms/s)</text>");
    assertThat(svg.indexOf(">throughput over time<")).isLessThan(svg.indexOf(">time used per second"));
    String cpuPanel = svg.substring(svg.indexOf(">time used per second"));
    assertThat(cpuPanel).contains(">2,000</text>").doesNotContain(">250,000</text>");
  }

  @Test
  void latencyBarsAreOnALogScaleUpToTheNiceCeilingOfTheLargest() {
    // Given a latency of 10 ms and one of 200 ms
    Result r = new Result("sync", "bin/im bench sync");
    LatencyRecorder h = r.latency("e2e", "ms");
    h.record(10);
    h.record(200);

    String svg = SvgChart.render(r);

    // Then p50 (10 ms) is log(11)/log(201) of the 580 px bar width and max is all of it
    assertThat(svg).contains("height=\"186\"").contains(">e2e (n=2)</text>")
        .contains("<rect x=\"210\" y=\"84\" width=\"262\" height=\"11\"")
        .contains("<text x=\"478\" y=\"94\" >10 ms</text>")
        .contains("<rect x=\"210\" y=\"140\" width=\"580\" height=\"11\"");
  }

  @Test
  void anEmptyResultSaysSoAndEveryNameIsEscaped() {
    assertThat(SvgChart.render(new Result("a<b", "x"))).contains("bench a&lt;b").contains("nothing measured")
        .contains("height=\"80\"");
  }
}
