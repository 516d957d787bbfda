package dev.impipe.bench.report;

import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.LongStream;
import javax.management.JMException;
import javax.management.ObjectName;
import org.apache.kafka.streams.KafkaStreams;

/**
 * Where this JVM's resident memory goes: what the JVM itself has committed (Native Memory Tracking, when the JVM runs
 * with {@code -XX:NativeMemoryTracking=summary}), and what the RocksDB stores of the given Streams apps report (their
 * memtables, the table readers' index and filter blocks outside the cache, and the shared block cache). What neither
 * accounts for is the C heap's own overhead and fragmentation (RocksDB allocates with malloc).
 */
public final class MemoryBreakdown {

  private static final Pattern NMT_LINE =
      Pattern.compile("^-?\\s*([A-Za-z][A-Za-z ]*?)\\s*\\(reserved=(\\d+)KB, committed=(\\d+)KB", Pattern.MULTILINE);
  private static final Pattern NMT_TOTAL = Pattern.compile("Total: reserved=(\\d+)KB, committed=(\\d+)KB");
  private static final String STATE_GROUP = "stream-state-metrics";

  private MemoryBreakdown() {}

  /**
   * The readings, in bytes, keyed by what they are (an empty NMT part when NMT is off): {@code nmt total}, {@code nmt
   * <category>} for each NMT category, {@code rocksdb memtables}, {@code rocksdb table readers}, {@code rocksdb block
   * cache}, {@code rocksdb pinned}.
   */
  public static Map<String, Long> read(Collection<KafkaStreams> apps) {
    Map<String, Long> m = new LinkedHashMap<>();
    nativeMemorySummary().ifPresent(summary -> m.putAll(parseNmt(summary)));
    m.put("rocksdb memtables", sum(apps, "size-all-mem-tables"));
    m.put("rocksdb table readers", sum(apps, "estimate-table-readers-mem"));
    // Every store reports the same shared cache: its largest reading, not the sum.
    m.put("rocksdb block cache", max(apps, "block-cache-usage"));
    m.put("rocksdb pinned", max(apps, "block-cache-pinned-usage"));
    return m;
  }

  /** NMT's summary as text, if the JVM tracks native memory. */
  static Optional<String> nativeMemorySummary() {
    try {
      Object out = ManagementFactory.getPlatformMBeanServer().invoke(
          new ObjectName("com.sun.management:type=DiagnosticCommand"), "vmNativeMemory",
          new Object[] {new String[] {"summary"}}, new String[] {String[].class.getName()});
      String text = String.valueOf(out);
      return NMT_TOTAL.matcher(text).find() ? Optional.of(text) : Optional.empty();
    } catch (JMException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** {@code nmt total} and {@code nmt <category>} (committed bytes) from an NMT summary. */
  static Map<String, Long> parseNmt(String summary) {
    Map<String, Long> m = new LinkedHashMap<>();
    Matcher total = NMT_TOTAL.matcher(summary);
    if (!total.find()) {
      return m;
    }
    m.put("nmt total", Long.parseLong(total.group(2)) * 1024);
    Matcher line = NMT_LINE.matcher(summary);
    while (line.find()) {
      m.put("nmt " + line.group(1).trim().toLowerCase(Locale.ROOT), Long.parseLong(line.group(3)) * 1024);
    }
    return m;
  }

  private static long sum(Collection<KafkaStreams> apps, String name) {
    return values(apps, name).sum();
  }

  private static long max(Collection<KafkaStreams> apps, String name) {
    return values(apps, name).max().orElse(0);
  }

  /** Every store's reading of the state-store metric {@code name}, across {@code apps}. */
  private static LongStream values(Collection<KafkaStreams> apps, String name) {
    return apps.stream().flatMap(app -> app.metrics().entrySet().stream())
        .filter(e -> e.getKey().name().equals(name) && e.getKey().group().equals(STATE_GROUP))
        .map(e -> e.getValue().metricValue())
        .filter(v -> v instanceof Number)
        .mapToLong(v -> ((Number) v).longValue());
  }
}
