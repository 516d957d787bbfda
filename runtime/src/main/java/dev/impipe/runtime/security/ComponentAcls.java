package dev.impipe.runtime.security;

import dev.impipe.runtime.topics.ApplicationIds;
import dev.impipe.runtime.topics.GenerationControl;
import dev.impipe.runtime.topics.TopicNames;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * What one pipeline component may do on Kafka, the one table of the pipeline's ACLs: the local secured cluster
 * creates exactly these ({@link ScramPrincipals}), and the Kubernetes KafkaUsers (deploy/k8s/base/users.yaml) are
 * checked against them.
 *
 * <p>Every component's principal is {@code User:im-<component>} and may: describe the pipeline's topics (prefix, the
 * start-up check of the topic catalogue); read exactly {@link #reads()} and write exactly {@link #writes()}
 * (literal topic names); and, for a Kafka Streams app (application id {@code <prefix><component>}), everything on
 * the topics prefixed {@code <application id>-} (changelogs, repartition topics), read its consumer group (literal:
 * the group id is the application id) and write the transactional ids prefixed {@code <application id>-}. The
 * trailing {@code -} matters: a prefix {@code im.delay} would also match the topic {@code im.delayed}, and
 * {@code im.ack-timeout} the topic {@code im.ack-timeouts}.
 *
 * @param component the component's name ({@code PipelineComponent.name()})
 * @param reads topics it consumes
 * @param writes topics it produces to
 * @param streamsApp whether it runs a Kafka Streams app named after it
 * @param consumerGroups suffixes of plain consumer groups it reads in besides its Streams app's (the group is the
 *     topic prefix + the component + {@code -} + the suffix)
 * @param generation the inbox generation of the topic names (ADR 0014): at g >= 1 the user-keyed Streams apps'
 *     application ids, and so their groups, changelogs and transactional ids, carry it ({@code im.inbox-store.g1})
 */
public record ComponentAcls(String component, Set<String> reads, Set<String> writes, boolean streamsApp,
    Set<String> consumerGroups, int generation) {

  /** The consumer group suffix of the notification senders ({@code im.notify-senders}). */
  public static final String NOTIFY_SENDERS_GROUP = "senders";

  /** A component's principal is this plus its name ({@code im-fanout}), as the Strimzi KafkaUsers are named. */
  public static final String PRINCIPAL_PREFIX = "im-";

  public ComponentAcls {
    reads = Set.copyOf(new TreeSet<>(reads));
    writes = Set.copyOf(new TreeSet<>(writes));
    consumerGroups = Set.copyOf(new TreeSet<>(consumerGroups));
  }

  public ComponentAcls(String component, Set<String> reads, Set<String> writes, boolean streamsApp) {
    this(component, reads, writes, streamsApp, Set.of(), 0);
  }

  public ComponentAcls(String component, Set<String> reads, Set<String> writes, boolean streamsApp,
      Set<String> consumerGroups) {
    this(component, reads, writes, streamsApp, consumerGroups, 0);
  }

  /** The consumer group {@code <prefix><component>-<suffix>}, one of {@link #consumerGroups()}. */
  public String consumerGroup(String topicPrefix, String suffix) {
    return applicationId(topicPrefix) + "-" + suffix;
  }

  /**
   * Every component's ACLs for the pipeline's topics. The delay topology writes the messages topic (its default
   * target allow-list, {@code IM_DELAY_TARGETS}) and the inbox (a refused cancel's REJECTED entry); a wider
   * allow-list needs write ACLs for its extra targets. Names of inbox generation g >= 1 ({@link
   * TopicNames#inGeneration}) give the generation's topics and application ids.
   */
  public static List<ComponentAcls> table(TopicNames t) {
    return rows(t).stream().map(a -> new ComponentAcls(a.component, a.reads, a.writes, a.streamsApp,
        a.consumerGroups, t.generation())).toList();
  }

  private static List<ComponentAcls> rows(TopicNames t) {
    return List.of(
        new ComponentAcls("ingest", Set.of(),
            Set.of(t.messages(), t.groupMembers(), t.delayed(), t.rejected()), false),
        // An online switch of the inbox generation (ADR 0014): the fan-out follows the control topic, writes its
        // tasks' fences to it and, once the next generation is live, that generation's inbox.
        new ComponentAcls("fanout", Set.of(t.messages(), t.groupMembers(), GenerationControl.topic(t)),
            Set.of(t.groupMembers(), t.inbox(), t.history(), t.rejected(), GenerationControl.topic(t),
                GenerationControl.inboxOf(t, t.generation() + 1)),
            true),
        new ComponentAcls("inbox-store", Set.of(t.inbox(), t.history(), t.deviceCursors()),
            Set.of(t.deviceCursors(), t.rejected()), true),
        new ComponentAcls("ack-timeout", Set.of(t.deliveries(), t.acks()),
            Set.of(t.ackTimeouts(), t.rejected()), true),
        new ComponentAcls("delay", Set.of(t.delayed()),
            Set.of(t.messages(), t.inbox(), t.rejected()), true),
        // The gateway commits a device's cursor itself when the device ACKs (PushOutput#cursor): it writes
        // im.device-cursors; it never consumes it (cursors are read through the inbox store's API).
        new ComponentAcls("push-gateway", Set.of(t.inbox(), t.ackTimeouts()),
            Set.of(t.deliveries(), t.acks(), t.deviceCursors(), t.rejected()), false),
        // Decides from the inbox, ACKs and cursors (its registrations arrive through im.push-registrations, which its
        // HTTP routes and its senders, on a 404/410, write); the senders consume im.notifications in their own group.
        new ComponentAcls("notify", Set.of(t.inbox(), t.acks(), t.deviceCursors(), t.pushRegistrations(),
            t.notifications()), Set.of(t.pushRegistrations(), t.notifications(), t.rejected()), true,
            Set.of(NOTIFY_SENDERS_GROUP)));
  }

  /** The row of {@code component}, if it has one. */
  public static Optional<ComponentAcls> of(TopicNames names, String component) {
    return table(names).stream().filter(a -> a.component.equals(component)).findFirst();
  }

  /** {@code im-<component>}. */
  public String principalName() {
    return PRINCIPAL_PREFIX + component;
  }

  /**
   * The Streams application id ({@code <prefix><component>}, with the inbox generation for the user-keyed apps,
   * {@link ApplicationIds}), as {@code StreamsDefaults} sets it.
   */
  public String applicationId(String topicPrefix) {
    return ApplicationIds.applicationId(topicPrefix, component, generation);
  }

  /** The ACL bindings granting this component's principal what it needs, and nothing else. */
  public List<AclBinding> bindings(String topicPrefix) {
    String principal = "User:" + principalName();
    List<AclBinding> acls = new ArrayList<>();
    acls.addAll(describeOnly(principalName(), topicPrefix));
    for (String topic : reads) {
      acls.add(allow(principal, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.READ));
    }
    for (String topic : writes) {
      acls.add(allow(principal, ResourceType.TOPIC, topic, PatternType.LITERAL, AclOperation.WRITE));
    }
    if (streamsApp) {
      String appId = applicationId(topicPrefix);
      acls.add(allow(principal, ResourceType.TOPIC, appId + "-", PatternType.PREFIXED, AclOperation.ALL));
      acls.add(allow(principal, ResourceType.GROUP, appId, PatternType.LITERAL, AclOperation.READ));
      acls.add(allow(principal, ResourceType.GROUP, appId, PatternType.LITERAL, AclOperation.DESCRIBE));
      acls.add(allow(principal, ResourceType.TRANSACTIONAL_ID, appId + "-", PatternType.PREFIXED,
          AclOperation.WRITE));
      acls.add(allow(principal, ResourceType.TRANSACTIONAL_ID, appId + "-", PatternType.PREFIXED,
          AclOperation.DESCRIBE));
    }
    for (String suffix : consumerGroups) {
      String group = consumerGroup(topicPrefix, suffix);
      acls.add(allow(principal, ResourceType.GROUP, group, PatternType.LITERAL, AclOperation.READ));
      acls.add(allow(principal, ResourceType.GROUP, group, PatternType.LITERAL, AclOperation.DESCRIBE));
    }
    return List.copyOf(acls);
  }

  /** Only what checking the topic catalogue at start-up needs (a process that runs no component's clients). */
  public static List<AclBinding> describeOnly(String principalName, String topicPrefix) {
    String principal = "User:" + principalName;
    // No prefix: every topic (a prefixed pattern must not be empty).
    String name = topicPrefix.isEmpty() ? ResourcePattern.WILDCARD_RESOURCE : topicPrefix;
    PatternType pattern = topicPrefix.isEmpty() ? PatternType.LITERAL : PatternType.PREFIXED;
    return List.of(
        allow(principal, ResourceType.TOPIC, name, pattern, AclOperation.DESCRIBE),
        allow(principal, ResourceType.TOPIC, name, pattern, AclOperation.DESCRIBE_CONFIGS));
  }

  private static AclBinding allow(String principal, ResourceType type, String name, PatternType pattern,
      AclOperation operation) {
    return new AclBinding(new ResourcePattern(type, name, pattern),
        new AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW));
  }
}
