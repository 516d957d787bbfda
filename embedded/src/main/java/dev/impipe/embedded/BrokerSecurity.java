package dev.impipe.embedded;

import dev.impipe.runtime.security.ScramPrincipals;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * SASL/SCRAM-SHA-512 and Kafka's {@code StandardAuthorizer} for the embedded brokers: clients (and brokers among
 * themselves) authenticate with SCRAM-SHA-512 over {@code SASL_PLAINTEXT} on 127.0.0.1 (no TLS: loopback only);
 * the KRaft controller listener uses SASL PLAIN with the same admin user (SCRAM credentials live in the metadata log,
 * which controllers need before they can read it). The admin is the only super user; its SCRAM credential is
 * written when the storage is formatted. Nothing is allowed without an ACL.
 *
 * @param adminUser the super user (brokers, controllers, the launcher's topic and ACL set-up)
 * @param adminPassword its password
 */
public record BrokerSecurity(String adminUser, String adminPassword) {

  public static final String SECURITY_PROTOCOL = "SASL_PLAINTEXT";
  public static final String AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
  /** The admin user's name unless given. */
  public static final String DEFAULT_ADMIN = "im-admin";

  public BrokerSecurity {
    if (adminUser.isBlank() || adminPassword.isBlank() || adminUser.contains(",") || adminUser.contains("=")
        || adminPassword.contains(",") || adminPassword.contains("]")) {
      throw new IllegalArgumentException("admin user and password must be non-blank without ',', '=' or ']'");
    }
  }

  /** A new admin with a random password. */
  public static BrokerSecurity generate() {
    return new BrokerSecurity(DEFAULT_ADMIN, ScramPrincipals.newPassword());
  }

  /** The admin's password kept in {@code file} (created with a new random one, readable by its owner only). */
  public static BrokerSecurity fromFile(Path file) throws IOException {
    if (!Files.exists(file)) {
      Files.createDirectories(file.toAbsolutePath().getParent());
      // Created owner-only before a byte is written: no moment in which others could read the password.
      try {
        Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
      } catch (UnsupportedOperationException e) {
        Files.createFile(file); // not a POSIX file system: its own permissions apply
      }
      Files.writeString(file, ScramPrincipals.newPassword(), StandardCharsets.US_ASCII,
          java.nio.file.StandardOpenOption.TRUNCATE_EXISTING);
    }
    return new BrokerSecurity(DEFAULT_ADMIN, Files.readString(file, StandardCharsets.US_ASCII).trim());
  }

  /** Broker settings replacing the plaintext listeners of a node with client port {@code port}. */
  public Map<String, String> brokerProperties(int port, int controllerPort) {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("listeners", "SASL_PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.put("advertised.listeners", "SASL_PLAINTEXT://127.0.0.1:" + port);
    p.put("inter.broker.listener.name", "SASL_PLAINTEXT");
    p.put("listener.security.protocol.map", "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT");
    p.put("sasl.enabled.mechanisms", ScramPrincipals.MECHANISM);
    p.put("sasl.mechanism.inter.broker.protocol", ScramPrincipals.MECHANISM);
    p.put("listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config",
        ScramPrincipals.jaasConfig(adminUser, adminPassword));
    p.put("sasl.mechanism.controller.protocol", "PLAIN");
    p.put("listener.name.controller.sasl.enabled.mechanisms", "PLAIN");
    p.put("listener.name.controller.plain.sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + adminUser
            + "\" password=\"" + adminPassword + "\" user_" + adminUser + "=\"" + adminPassword + "\";");
    p.put("authorizer.class.name", AUTHORIZER);
    p.put("super.users", "User:" + adminUser);
    p.put("allow.everyone.if.no.acl.found", "false");
    return p;
  }

  /** The {@code --add-scram} argument of storage formatting: the admin's SCRAM credential. */
  String scramFormatArgument() {
    return ScramPrincipals.MECHANISM + "=[name=" + adminUser + ",password=" + adminPassword + "]";
  }

  /** Client properties (without {@code bootstrap.servers}) of the admin. */
  public Map<String, String> adminClientProperties() {
    return ScramPrincipals.clientProperties(SECURITY_PROTOCOL, adminUser, adminPassword);
  }

  /** Client properties of another principal on these brokers. */
  public static Map<String, String> clientProperties(String user, String password) {
    return ScramPrincipals.clientProperties(SECURITY_PROTOCOL, user, password);
  }

  @Override
  public String toString() {
    return "BrokerSecurity[SCRAM-SHA-512, admin " + adminUser + "]";
  }
}
