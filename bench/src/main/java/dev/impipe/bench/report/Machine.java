package dev.impipe.bench.report;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** What the results were measured on, and process memory readings. */
public final class Machine {

  private Machine() {}

  public static Map<String, Object> describe() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("cpus", Runtime.getRuntime().availableProcessors());
    m.put("cpuModel", cpuModel());
    m.put("memTotalMb", memTotalKb() / 1024);
    m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    m.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    m.put("maxHeapMb", Runtime.getRuntime().maxMemory() / (1024 * 1024));
    m.put("jvmArgs", ManagementFactory.getRuntimeMXBean().getInputArguments());
    return m;
  }

  /** {@code /proc/loadavg}'s first three fields, or "n/a". */
  public static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException | RuntimeException e) {
      return "n/a";
    }
  }

  /** Heap used after a full GC, in bytes (this JVM). */
  public static long heapAfterGc() {
    for (int i = 0; i < 2; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** Resident set size of this process ({@code VmRSS} of /proc/self/status), bytes; -1 if unknown. */
  public static long rss() {
    return procStatus(Path.of("/proc/self/status"), "VmRSS:");
  }

  /** Resident set size of process {@code pid}, bytes; -1 if unknown. */
  public static long rss(long pid) {
    return procStatus(Path.of("/proc/" + pid + "/status"), "VmRSS:");
  }

  private static long procStatus(Path file, String field) {
    try {
      for (String line : Files.readAllLines(file)) {
        if (line.startsWith(field)) {
          return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]) * 1024;
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return -1;
  }

  /** Bytes of the regular files under {@code dir}. */
  public static long diskUsage(Path dir) {
    if (!Files.exists(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(Files::isRegularFile).mapToLong(p -> {
        try {
          return Files.size(p);
        } catch (IOException e) {
          return 0;
        }
      }).sum();
    } catch (IOException | java.io.UncheckedIOException e) {
      return -1;
    }
  }

  private static String cpuModel() {
    try {
      List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
      return lines.stream().filter(l -> l.startsWith("model name")).findFirst()
          .map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("n/a");
    } catch (IOException e) {
      return "n/a";
    }
  }

  private static long memTotalKb() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          return Long.parseLong(line.replaceAll("\\D", ""));
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return -1;
  }
}
