package dev.impipe.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultTest {

  @TempDir
  Path dir;

  @Test
  void writesJsonMarkdownAndSvg() throws Exception {
    Result r = new Result("fanout", "bin/im bench fanout");
    r.ceiling("recordsPerSec", 250_000.0);
    r.figure("inbox entries", 123_456.7, "entries/s");
    r.figure("ratio", 0.49, "ratio", ">= 0.5", false);
    LatencyRecorder h = r.latency("e2e", "ms");
    h.record(10);
    h.record(200);
    Series s = r.series("written", "entries/s");
    s.add(1, 100);
    s.add(2, 300);
    r.series("pending", "entries").add(1, 5);
    r.note("a <note> & more");

    Path json = r.write(dir);

    JsonNode root = new ObjectMapper().readTree(json.toFile());
    assertThat(root.get("scenario").asText()).isEqualTo("fanout");
    assertThat(root.get("figures").get(1).get("met").asBoolean()).isFalse();
    assertThat(root.get("latencies").get("e2e").get("max").asLong()).isEqualTo(200);
    assertThat(root.get("series").get("written").get("points").size()).isEqualTo(2);
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString().replaceAll("^fanout-\\d{8}-\\d{6}", "X")))
          .containsExactlyInAnyOrder("X.json", "X.md", "X.svg");
    }
    String svg = Files.readString(json.resolveSibling(json.getFileName().toString().replace(".json", ".svg")));
    assertThat(svg).startsWith("<svg").contains("polyline").contains("p99").doesNotContain("<note>");
    String md = Files.readString(json.resolveSibling(json.getFileName().toString().replace(".json", ".md")));
    assertThat(md).contains("| ratio | 0.49 | ratio | >= 0.5 | **no** |").contains("123,457");
  }

  @Test
  void followsEachLatencyHistogramOverTimeAsItsP99PerInterval() throws Exception {
    Result r = new Result("push", "bin/im bench push");
    LatencyRecorder h = r.latency("send -> receive", "ms");
    for (int i = 1; i <= 100; i++) {
      h.record(i);
    }
    r.sampleLatencies();
    r.sampleLatencies(); // nothing recorded in this interval: no point
    h.record(5_000);
    r.sampleLatencies();

    Series overTime = r.seriesMap().get("send -> receive" + Result.LATENCY_SERIES_SUFFIX);
    assertThat(overTime.unit()).isEqualTo("ms");
    assertThat(overTime.points()).hasSize(2);
    assertThat(overTime.points().get(0)[1]).isEqualTo(99.0);
    // HdrHistogram, 3 significant digits: the upper edge of 5000's bucket, at most 0.1% above it
    assertThat(overTime.points().get(1)[1]).isBetween(5_000.0, 5_005.0);
    assertThat(h.percentile(99)).isEqualTo(100); // the whole-run histogram keeps every sample

    Path json = r.write(dir);
    String svg = Files.readString(json.resolveSibling(json.getFileName().toString().replace(".json", ".svg")));
    assertThat(svg).contains("latency over time").contains("send -&gt; receive" + Result.LATENCY_SERIES_SUFFIX);
  }
}
