package dev.impipe.cli;

import dev.impipe.runtime.config.ConfigTable;
import dev.impipe.runtime.config.Setting;
import dev.impipe.runtime.config.SharedSettings;
import dev.impipe.embedded.EmbeddedSchemaRegistry;
import java.util.Locale;

/** Settings of {@code bin/im} itself (the launcher), besides the pipeline's. */
final class CliConfig {

  static final Setting<String> COMPONENTS = Setting.optional(LocalLauncher.IM_COMPONENTS,
      "`bin/im run` / `local`: the components this instance runs (comma-separated)").defaultDoc("all");
  static final Setting<String> KAFKA_SECURITY = Setting.string(LocalKafkaSecurity.IM_KAFKA_SECURITY, "none",
      "`bin/im local`: `scram` runs the embedded brokers with SASL/SCRAM and ACLs, one principal per component "
          + "(see Security)")
      .validate(mode -> mode.toLowerCase(Locale.ROOT).matches("none|scram"), "none or scram");
  static final Setting<String> JAVA_OPTS = Setting.documented("IM_JAVA_OPTS", "`-Xms256m -Xmx2g`",
      "JVM options of `bin/im`");

  static final Setting<String> BROKER_JAVA_OPTS = Setting.string("IM_BROKER_JAVA_OPTS", LocalCluster.BROKER_JAVA_OPTS,
      "`bin/im local --brokers N`: JVM options of each broker process");
  static final Setting<String> INSTANCE_JAVA_OPTS = Setting.string("IM_INSTANCE_JAVA_OPTS",
      LocalCluster.INSTANCE_JAVA_OPTS, "`bin/im local --instances N`: JVM options of each pipeline instance process");
  static final Setting<Long> PARENT_PID = Setting.parsed(LocalCommand.IM_PARENT_PID, "integer", null,
      pid -> LocalCommand.parsePid(pid), "set by `bin/im local` on the processes it starts, which exit with it "
          + "(internal)");

  static final ConfigTable TABLE = ConfigTable.of("cli", COMPONENTS, KAFKA_SECURITY, JAVA_OPTS, BROKER_JAVA_OPTS,
      INSTANCE_JAVA_OPTS, SharedSettings.LOCAL_ENDPOINTS_FILE, PARENT_PID, EmbeddedSchemaRegistry.APICURIO_HOME);

  private CliConfig() {
  }
}
