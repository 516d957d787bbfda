package dev.impipe.runtime.security;

import dev.impipe.runtime.topics.TopicNames;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AclBinding;

/**
 * SASL/SCRAM-SHA-512 principals of the pipeline on a cluster with an authorizer: the client settings a principal
 * logs in with, and the set-up (credentials and {@link ComponentAcls}) an admin does once per cluster.
 */
public final class ScramPrincipals {

  public static final String MECHANISM = "SCRAM-SHA-512";
  /** Iterations of the stored SCRAM credential (Kafka's minimum for SHA-512 is 4096). */
  static final int ITERATIONS = 8192;
  private static final long TIMEOUT_S = 60;

  private ScramPrincipals() {}

  /** A fresh random password (32 hex characters). */
  public static String newPassword() {
    byte[] bytes = new byte[16];
    new SecureRandom().nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /** The {@code sasl.jaas.config} value of a SCRAM login (quotes and backslashes in the password escaped). */
  public static String jaasConfig(String user, String password) {
    return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + quote(user)
        + "\" password=\"" + quote(password) + "\";";
  }

  /**
   * Kafka client properties of a SCRAM login over {@code securityProtocol} ({@code SASL_PLAINTEXT} or
   * {@code SASL_SSL}), without {@code bootstrap.servers}.
   */
  public static Map<String, String> clientProperties(String securityProtocol, String user, String password) {
    Map<String, String> props = new LinkedHashMap<>();
    props.put("security.protocol", securityProtocol);
    props.put("sasl.mechanism", MECHANISM);
    props.put("sasl.jaas.config", jaasConfig(user, password));
    return props;
  }

  /**
   * As an admin: creates (or replaces) the SCRAM credentials of every given principal and the ACLs of each
   * component in {@link ComponentAcls#table}; {@code passwords} maps principal names ({@code im-fanout}) to
   * passwords, a principal that is no component's (a launcher's own) gets {@link ComponentAcls#describeOnly}.
   * Creating an ACL that exists is a no-op, so this may run on every start.
   *
   * @return the bindings created
   */
  public static List<AclBinding> provision(Admin admin, String topicPrefix, Map<String, String> passwords)
      throws Exception {
    return provision(admin, topicPrefix, 0, passwords);
  }

  /**
   * As {@link #provision(Admin, String, Map)} for a deployment at inbox generation {@code generation} (ADR 0014):
   * the components get generation 0's grants and, for g >= 1, generation g's topics and application ids as well,
   * so the same principals work before, during and after a grow.
   */
  public static List<AclBinding> provision(Admin admin, String topicPrefix, int generation,
      Map<String, String> passwords) throws Exception {
    List<UserScramCredentialAlteration> upserts = new ArrayList<>();
    passwords.forEach((user, password) -> upserts.add(new UserScramCredentialUpsertion(user,
        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, ITERATIONS), password)));
    admin.alterUserScramCredentials(upserts).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    List<AclBinding> acls = bindings(topicPrefix, generation, passwords.keySet());
    admin.createAcls(acls).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    return acls;
  }

  /** The ACL bindings of {@code users} at {@code generation} (generation 0's plus generation g's), no duplicates. */
  static List<AclBinding> bindings(String topicPrefix, int generation, Collection<String> users) {
    Set<AclBinding> acls = new LinkedHashSet<>();
    TopicNames base = TopicNames.withPrefix(topicPrefix);
    for (int g : generation == 0 ? List.of(0) : List.of(0, generation)) {
      List<ComponentAcls> table = ComponentAcls.table(base.inGeneration(g));
      for (String user : users) {
        acls.addAll(table.stream().filter(c -> c.principalName().equals(user)).findFirst()
            .map(c -> c.bindings(topicPrefix)).orElseGet(() -> ComponentAcls.describeOnly(user, topicPrefix)));
      }
    }
    return List.copyOf(acls);
  }

  private static String quote(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }
}
