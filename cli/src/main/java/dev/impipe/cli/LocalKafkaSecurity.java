package dev.impipe.cli;

import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.config.InvalidConfigException;
import dev.impipe.embedded.BrokerSecurity;
import dev.impipe.runtime.security.ComponentAcls;
import dev.impipe.runtime.security.ScramPrincipals;
import dev.impipe.runtime.topics.TopicNames;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;

/**
 * {@code IM_KAFKA_SECURITY=scram}: local mode's embedded brokers run SASL/SCRAM-SHA-512 (SASL_PLAINTEXT on
 * 127.0.0.1) with the StandardAuthorizer ({@link BrokerSecurity}); every component logs in as its own principal
 * {@code im-<component>} with only the ACLs of {@link ComponentAcls}, through its {@code IM_<COMPONENT>_KAFKA_*}
 * variables; the shared {@code KAFKA_*} login is {@code im-launcher}, which may only describe the pipeline's topics
 * (the start-up check of the catalogue). The admin password and the principals' passwords are generated once into
 * the data dir ({@code kafka-admin.password}, {@code kafka-users.properties}, owner-only) and reused on restart.
 * Default ({@code none}): plaintext, no authorizer, as before.
 */
final class LocalKafkaSecurity {

  static final String IM_KAFKA_SECURITY = "IM_KAFKA_SECURITY";
  static final String LAUNCHER = "im-launcher";
  static final String ADMIN_FILE = "kafka-admin.password";
  static final String USERS_FILE = "kafka-users.properties";

  private final BrokerSecurity broker;
  /** Principal name -> password: every component's, then the launcher's. */
  private final Map<String, String> passwords;

  private LocalKafkaSecurity(BrokerSecurity broker, Map<String, String> passwords) {
    this.broker = broker;
    this.passwords = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(passwords));
  }

  /**
   * The security {@code IM_KAFKA_SECURITY} asks for: empty for {@code none} (default), SCRAM with credentials kept
   * in {@code root} for {@code scram}. Refused with an existing cluster ({@code KAFKA_BOOTSTRAP_SERVERS}): its
   * credentials come from {@code KAFKA_*} / {@code IM_<COMPONENT>_KAFKA_*}.
   */
  static Optional<LocalKafkaSecurity> configure(Map<String, String> env, Path root) throws IOException {
    String mode = CliConfig.KAFKA_SECURITY.read(env).toLowerCase(Locale.ROOT);
    if (mode.equals("none")) {
      return Optional.empty();
    }
    if (ImConfig.BOOTSTRAP.read(env) != null) {
      throw new InvalidConfigException(IM_KAFKA_SECURITY + "=scram secures the embedded brokers; with "
          + ImConfig.KAFKA_BOOTSTRAP_SERVERS + " set, give each component its login in IM_<COMPONENT>_KAFKA_* "
          + "(docs/security.md)");
    }
    BrokerSecurity broker = BrokerSecurity.fromFile(root.resolve(ADMIN_FILE));
    Path usersFile = root.resolve(USERS_FILE);
    Properties stored = new Properties();
    if (Files.exists(usersFile)) {
      try (InputStream in = Files.newInputStream(usersFile)) {
        stored.load(in);
      }
    }
    Map<String, String> passwords = new LinkedHashMap<>();
    boolean added = false;
    for (ComponentAcls c : ComponentAcls.table(TopicNames.withPrefix("im."))) {
      added |= stored.getProperty(c.principalName()) == null;
      passwords.put(c.principalName(), stored.getProperty(c.principalName(), ScramPrincipals.newPassword()));
    }
    added |= stored.getProperty(LAUNCHER) == null;
    passwords.put(LAUNCHER, stored.getProperty(LAUNCHER, ScramPrincipals.newPassword()));
    if (added) {
      passwords.forEach(stored::setProperty);
      Files.deleteIfExists(usersFile);
      Files.createFile(usersFile, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      try (OutputStream out = Files.newOutputStream(usersFile, StandardOpenOption.TRUNCATE_EXISTING)) {
        stored.store(out, "SCRAM-SHA-512 passwords of local mode's Kafka principals (IM_KAFKA_SECURITY=scram)");
      }
    }
    return Optional.of(new LocalKafkaSecurity(broker, passwords));
  }

  BrokerSecurity broker() {
    return broker;
  }

  /**
   * The variables a pipeline process gets: SASL_PLAINTEXT + SCRAM-SHA-512 for every client, the launcher's login
   * shared, each component's own login in {@code IM_<COMPONENT>_KAFKA_SASL_JAAS_CONFIG}.
   */
  Map<String, String> clientEnv() {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("KAFKA_SECURITY_PROTOCOL", BrokerSecurity.SECURITY_PROTOCOL);
    env.put("KAFKA_SASL_MECHANISM", ScramPrincipals.MECHANISM);
    env.put("KAFKA_SASL_JAAS_CONFIG", ScramPrincipals.jaasConfig(LAUNCHER, passwords.get(LAUNCHER)));
    for (ComponentAcls c : ComponentAcls.table(TopicNames.withPrefix("im."))) {
      env.put("IM_" + ImConfig.componentKey(c.component()) + "_KAFKA_SASL_JAAS_CONFIG",
          ScramPrincipals.jaasConfig(c.principalName(), passwords.get(c.principalName())));
    }
    return env;
  }

  /**
   * As the admin: every principal's SCRAM credential and ACLs (idempotent, so on every start), for generation 0 and
   * the inbox generation in use.
   */
  void provision(Admin admin, String topicPrefix, int generation) throws Exception {
    ScramPrincipals.provision(admin, topicPrefix, generation, passwords);
  }

  /** The admin's client properties on {@code bootstrap}. */
  Map<String, Object> adminClientProperties(String bootstrap) {
    Map<String, Object> props = new LinkedHashMap<>(broker.adminClientProperties());
    props.put("bootstrap.servers", bootstrap);
    return props;
  }

  /** The start-up line. */
  String describe() {
    return "Kafka security: SASL/SCRAM-SHA-512 over SASL_PLAINTEXT on 127.0.0.1 + StandardAuthorizer; principals "
        + String.join(", ", passwords.keySet()) + " (passwords in " + USERS_FILE + ", admin " + broker.adminUser()
        + " in " + ADMIN_FILE + ")";
  }
}
