package dev.impipe.runtime.config;

/**
 * Settings more than one component reads, declared here once so that each reads the same name, default and range.
 * The table of the component that owns one documents it ({@code delay} for {@link #DELAY_MAX}); the others list it
 * with {@link ConfigTable#alsoReading}.
 */
public final class SharedSettings {

  public static final String IM_DELAY_MAX = "IM_DELAY_MAX";

  /** Furthest ahead a message may be scheduled: ingest refuses it, the delay topology dead-letters it. */
  public static final Setting<java.time.Duration> DELAY_MAX = Setting.duration(IM_DELAY_MAX, "730d", "1s", "3660d",
      "maximum delay; further ahead is rejected (ingest uses the same limit)");

  public static final String IM_LOCAL_ENDPOINTS_FILE = "IM_LOCAL_ENDPOINTS_FILE";

  /** Written by {@code bin/im local}, read by the tools that find it (documented with the launcher's settings). */
  public static final Setting<java.nio.file.Path> LOCAL_ENDPOINTS_FILE = Setting.parsed(IM_LOCAL_ENDPOINTS_FILE,
      "path", java.nio.file.Path.of(System.getProperty("user.home"), ".im", "local.properties"),
      java.nio.file.Path::of, "where `bin/im local` writes the addresses of its broker, registry and HTTP API, which "
          + "`produce`, `tail`, `token` and `bench` read")
      .defaultDoc("`~/.im/local.properties`");

  private SharedSettings() {
  }
}
