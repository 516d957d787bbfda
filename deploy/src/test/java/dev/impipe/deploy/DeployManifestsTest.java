package dev.impipe.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import dev.impipe.ack.AckTimeoutConfig;
import dev.impipe.ack.wheel.AckWheelMetrics;
import dev.impipe.ack.wheel.AckWheelTopology;
import dev.impipe.delay.DelayConfig;
import dev.impipe.delay.DelayMetrics;
import dev.impipe.delay.DelayTopology;
import dev.impipe.fanout.FanoutConfig;
import dev.impipe.fanout.FanoutMetrics;
import dev.impipe.fanout.FanoutTopology;
import dev.impipe.inbox.InboxStoreConfig;
import dev.impipe.inbox.InboxStoreTopology;
import dev.impipe.runtime.app.PipelineComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.security.ComponentAcls;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.GenerationControl;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicSpec;
import dev.impipe.schemas.registry.InMemorySchemaRegistry;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.nodepool.KafkaNodePool;
import io.strimzi.api.kafka.model.topic.KafkaTopic;
import io.strimzi.api.kafka.model.user.KafkaUser;
import io.strimzi.api.kafka.model.user.KafkaUserAuthorizationSimple;
import io.strimzi.api.kafka.model.user.acl.AclOperation;
import io.strimzi.api.kafka.model.user.acl.AclResourcePatternType;
import io.strimzi.api.kafka.model.user.acl.AclRule;
import io.strimzi.api.kafka.model.user.acl.AclRuleTopicResource;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every Kubernetes manifest under deploy/k8s parsed into fabric8's and Strimzi's typed models (an unknown field is an
 * error), then checked against the code: env names, ports, probe paths, topics, ACLs and image names.
 */
class DeployManifestsTest {

  private static final Path K8S = Path.of("k8s");
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
  private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.ofEntries(
      Map.entry("Deployment", Deployment.class), Map.entry("StatefulSet", StatefulSet.class),
      Map.entry("Service", Service.class), Map.entry("ConfigMap", ConfigMap.class),
      Map.entry("Namespace", Namespace.class), Map.entry("PodDisruptionBudget", PodDisruptionBudget.class),
      Map.entry("Ingress", Ingress.class), Map.entry("Kafka", Kafka.class),
      Map.entry("KafkaNodePool", KafkaNodePool.class), Map.entry("KafkaTopic", KafkaTopic.class),
      Map.entry("KafkaUser", KafkaUser.class), Map.entry("NetworkPolicy", NetworkPolicy.class));
  /** The component workloads' names: im-COMPONENT. */
  private static final Set<String> STREAMS_APPS = Set.of("fanout", "inbox-store", "ack-timeout", "delay");

  private static List<HasMetadata> base;
  private static Properties build;

  @BeforeAll
  static void parse() throws IOException {
    base = new ArrayList<>();
    for (Path file : yamlFiles(K8S.resolve("base"))) {
      if (!file.getFileName().toString().equals("kustomization.yaml")) {
        base.addAll(parseAll(file));
      }
    }
    build = new Properties();
    try (InputStream in = PipelineRuntime.class.getResourceAsStream("/im-runtime.properties")) {
      build.load(in);
    }
  }

  @Test
  void everyManifestParsesIntoItsTypedModelWithNoUnknownField() throws IOException {
    assertThat(base).extracting(HasMetadata::getKind).contains("Kafka", "KafkaNodePool", "KafkaTopic", "KafkaUser",
        "StatefulSet", "Deployment", "Service", "PodDisruptionBudget", "Ingress");
    for (HasMetadata resource : base) {
      assertNoUnknownFields(resource, resource.getKind() + "/" + resource.getMetadata().getName());
    }
    // The overlay's strategic-merge patches are typed resources too.
    for (Path file : yamlFiles(K8S.resolve("overlays"))) {
      JsonNode first = YAML.readTree(file.toFile());
      if (first != null && first.has("kind") && !first.get("kind").asText().equals("Kustomization")) {
        for (HasMetadata patch : parseAll(file)) {
          assertNoUnknownFields(patch, file.toString());
        }
      }
    }
  }

  @Test
  void kustomizationsNameOnlyFilesThatExistAndRetagTheImagesTheBuildProduces() throws IOException {
    for (Path file : yamlFiles(K8S)) {
      if (!file.getFileName().toString().equals("kustomization.yaml")) {
        continue;
      }
      JsonNode k = YAML.readTree(file.toFile());
      for (JsonNode r : k.path("resources")) {
        assertThat(file.getParent().resolve(r.asText())).as(file + " resource " + r).exists();
      }
      for (JsonNode p : k.path("patches")) {
        assertThat(file.getParent().resolve(p.get("path").asText())).as(file + " patch").exists();
      }
      for (JsonNode image : k.path("images")) {
        assertThat(image.get("name").asText()).as(file + " retags an image the build produces")
            .isIn("im-pipeline", "im-apicurio", "im-kafka");
      }
    }
    // JSON patches only add env names the code knows.
    for (Path file : yamlFiles(K8S.resolve("overlays"))) {
      JsonNode doc = YAML.readTree(file.toFile());
      if (doc != null && doc.isArray()) {
        for (JsonNode op : doc) {
          if (op.get("path").asText().contains("/env/")) {
            assertThat(knownEnvName(op.get("value").get("name").asText())).as(file + " env").isTrue();
          }
        }
      }
    }
  }

  @Test
  void imagesAreTheOnesTheBuildProduces() {
    for (PodTemplateSpec pod : pods().values()) {
      for (Container c : containers(pod)) {
        assertThat(c.getImage()).isIn("im-pipeline:" + build.getProperty("im.version"),
            "im-apicurio:" + build.getProperty("apicurio.version"));
      }
    }
  }

  @Test
  void oneWorkloadPerComponentStreamsAppsInStatefulSetsWithStateVolumes() {
    Set<String> components = ServiceLoader.load(PipelineComponent.class).stream()
        .map(p -> p.get().name()).collect(Collectors.toSet());
    assertThat(components).containsAll(STREAMS_APPS);
    Map<String, String> byComponent = new HashMap<>();
    for (HasMetadata r : base) {
      if (r instanceof Deployment || r instanceof StatefulSet) {
        Container im = containers(pod(r)).get(0);
        if (!im.getImage().startsWith("im-pipeline:")) {
          continue;
        }
        String component = env(im).get("IM_COMPONENTS");
        assertThat(component).as(r.getMetadata().getName() + " IM_COMPONENTS").isIn(components);
        assertThat(byComponent.put(component, r.getMetadata().getName())).as("one workload for " + component).isNull();
        assertThat(r.getMetadata().getName()).isEqualTo("im-" + component);
        if (STREAMS_APPS.contains(component)) {
          assertThat(r).as(component + " keeps RocksDB state").isInstanceOf(StatefulSet.class);
          StatefulSet set = (StatefulSet) r;
          assertThat(set.getSpec().getVolumeClaimTemplates()).extracting(c -> c.getMetadata().getName())
              .contains("state");
          String mount = im.getVolumeMounts().stream().filter(m -> m.getName().equals("state")).findFirst()
              .orElseThrow().getMountPath();
          assertThat(env(im).get("IM_STATE_DIR")).as("state dir on the volume").startsWith(mount + "/");
        }
      }
    }
    assertThat(byComponent.keySet()).isEqualTo(components);
  }

  @Test
  void envNamesAreConfigKeysTheCodeReads() throws IOException {
    for (Map.Entry<String, PodTemplateSpec> e : pods().entrySet()) {
      for (Container c : containers(e.getValue())) {
        if (!c.getImage().startsWith("im-pipeline:")) {
          continue;
        }
        for (EnvVar var : c.getEnv()) {
          assertThat(knownEnvName(var.getName())).as(e.getKey() + " env " + var.getName() + " is read by the code")
              .isTrue();
        }
      }
    }
    assertThat(knownEnvName("IM_NO_SUCH_SETTING")).isFalse();
    assertThat(knownEnvName("KAFKA_NO_SUCH_PROPERTY")).isFalse();
  }

  @Test
  void portsAndProbePathsAreTheServersOwn() throws Exception {
    int defaultPort = ImConfig.fromEnv(Map.of()).httpPort();
    Set<String> probePaths = new TreeSet<>();
    for (Map.Entry<String, PodTemplateSpec> e : pods().entrySet()) {
      Container c = containers(e.getValue()).get(0);
      if (!c.getImage().startsWith("im-pipeline:")) {
        continue;
      }
      int declared = Integer.parseInt(env(c).getOrDefault("IM_HTTP_PORT", Integer.toString(defaultPort)));
      assertThat(c.getPorts()).extracting(p -> p.getContainerPort()).as(e.getKey()).containsExactly(declared);
      assertThat(c.getPorts().get(0).getName()).isEqualTo("http");
      assertThat(env(c).get("IM_HTTP_HOST")).as(e.getKey() + " listens beyond loopback").isEqualTo("0.0.0.0");
      for (HTTPGetAction probe : List.of(c.getReadinessProbe().getHttpGet(), c.getLivenessProbe().getHttpGet())) {
        assertThat(probe.getPort().getStrVal()).isEqualTo("http");
        probePaths.add(probe.getPath());
      }
      assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/health");
      assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
      assertThat(e.getValue().getSpec().getAffinity().getPodAntiAffinity()).as(e.getKey()).isNotNull();
    }
    // The probe paths answer on a real server (no component: ready at once, no token needed).
    Map<String, String> env = TestTokens.env(Map.of("IM_HTTP_PORT", "0"));
    ImConfig config = ImConfig.fromEnv(env);
    try (PipelineRuntime runtime = new PipelineRuntime(config, env,
        new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope("mock://manifests")))) {
      runtime.start(List.of());
      HttpClient http = HttpClient.newHttpClient();
      for (String path : probePaths) {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + runtime.http().port() + path)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("GET " + path).isEqualTo(200);
      }
    }
    // Every workload has a disruption budget; the HTTP components a Service on the named port.
    Set<String> budgeted = base.stream().filter(r -> r instanceof PodDisruptionBudget)
        .map(r -> ((PodDisruptionBudget) r).getSpec().getSelector().getMatchLabels().get("app.kubernetes.io/name"))
        .collect(Collectors.toSet());
    assertThat(budgeted).containsAll(pods().keySet());
    for (String api : List.of("im-ingest", "im-inbox-store", "im-push-gateway")) {
      Service service = (Service) find("Service", api);
      assertThat(service.getSpec().getPorts().get(0).getTargetPort().getStrVal()).isEqualTo("http");
    }
  }

  @Test
  void topicsAreTheCatalogue() {
    ImConfig defaults = ImConfig.fromEnv(Map.of());
    Map<String, KafkaTopic> declared = base.stream().filter(r -> r instanceof KafkaTopic).map(r -> (KafkaTopic) r)
        .collect(Collectors.toMap(t -> t.getSpec().getTopicName(), t -> t));
    List<TopicSpec> catalogue = TopicCatalog.specs(TopicNames.withPrefix(defaults.topicPrefix()), defaults);
    assertThat(declared.keySet()).isEqualTo(catalogue.stream().map(TopicSpec::name).collect(Collectors.toSet()));
    for (TopicSpec spec : catalogue) {
      KafkaTopic topic = declared.get(spec.name());
      assertThat(topic.getSpec().getPartitions()).as(spec.name()).isEqualTo(spec.partitions());
      assertThat(topic.getSpec().getReplicas()).as(spec.name()).isEqualTo(3);
      spec.configs()
          .forEach((key, value) -> assertThat(String.valueOf(topic.getSpec().getConfig().get(key)))
              .as(spec.name() + " " + key)
              .isEqualTo(value));
    }
  }

  @Test
  void eachStreamsAppsUserMayReadWhatItsTopologyReadsAndWriteWhatItWrites() {
    ImTopics topics = new ImTopics(TopicNames.withPrefix("im."), InMemorySchemaRegistry.forScope("mock://acls"));
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    DelayConfig delay = DelayConfig.fromEnv(env(containers(pod(find("StatefulSet", "im-delay"))).get(0)));
    Map<String, Topology> topologies = Map.of(
        "fanout", FanoutTopology.build(topics, FanoutConfig.defaults(), new FanoutMetrics(meters)),
        "inbox-store", InboxStoreTopology.build(topics, InboxStoreConfig.defaults()),
        "ack-timeout", AckWheelTopology.build(topics, AckTimeoutConfig.defaults(), new AckWheelMetrics(meters)),
        "delay", DelayTopology.build(topics, delay, t -> true, new DelayMetrics(meters)));
    for (Map.Entry<String, Topology> e : topologies.entrySet()) {
      List<AclRule> acls = acls("im-" + e.getKey());
      Set<String> reads = new TreeSet<>();
      Set<String> writes = new TreeSet<>();
      for (TopologyDescription.Subtopology sub : e.getValue().describe().subtopologies()) {
        for (TopologyDescription.Node node : sub.nodes()) {
          if (node instanceof TopologyDescription.Source source) {
            reads.addAll(source.topicSet());
          } else if (node instanceof TopologyDescription.Sink sink) {
            if (sink.topic() != null) {
              writes.add(sink.topic());
            } else if (e.getKey().equals("fanout")) {
              // Dynamic sink (fan-out's inbox): the live inbox generation, this one or, after an online switch,
              // the next (ADR 0014); its control records are a plain sink, its watch of them a plain consumer.
              writes.add(topics.inbox().name());
              writes.add(GenerationControl.inboxOf(TopicNames.withPrefix("im."), 1));
              reads.add(GenerationControl.topic(TopicNames.withPrefix("im.")));
            } else {
              // Dynamic sink (delay): the configured targets, which must be plain topic names here, and the
              // inbox (a refused cancel's REJECTED entry, DelayTopology.inboxNotices).
              assertThat(delay.targets()).as("delay targets pinned in the manifest").noneMatch(t -> t.contains("*"));
              writes.addAll(delay.targets());
              writes.add(topics.inbox().name());
            }
          }
        }
      }
      for (TopologyDescription.GlobalStore global : e.getValue().describe().globalStores()) {
        reads.addAll(global.source().topicSet());
      }
      String internalPrefix = "im." + e.getKey();
      for (String topic : reads) {
        String t = topic.startsWith("im.") ? topic : internalPrefix + "-" + topic;
        assertThat(allows(acls, t, AclOperation.READ)).as(e.getKey() + " reads " + t).isTrue();
      }
      for (String topic : writes) {
        String t = topic.startsWith("im.") ? topic : internalPrefix + "-" + topic;
        assertThat(allows(acls, t, AclOperation.WRITE)).as(e.getKey() + " writes " + t).isTrue();
      }
      // And nothing beyond: every literal topic ACL is one the topology reads or writes (or rejected, which any
      // component may write a bad record to).
      for (AclRule rule : acls) {
        if (rule.getResource() instanceof AclRuleTopicResource r
            && r.getPatternType() == AclResourcePatternType.LITERAL) {
          assertThat(reads.contains(r.getName()) || writes.contains(r.getName()) || r.getName().equals("im.rejected"))
              .as(e.getKey() + " has no use for " + r.getName()).isTrue();
        }
      }
    }
  }

  @Test
  void eachComponentsKafkaUserHasExactlyTheAclsOfTheCodesTable() {
    Set<String> users = base.stream().filter(r -> r instanceof KafkaUser).map(r -> r.getMetadata().getName())
        .collect(Collectors.toSet());
    for (ComponentAcls component : ComponentAcls.table(TopicNames.withPrefix("im."))) {
      assertThat(users).as("a KafkaUser for " + component.component()).contains(component.principalName());
      Set<String> declared = new TreeSet<>();
      for (AclRule rule : acls(component.principalName())) {
        for (AclOperation op : rule.getOperations()) {
          declared.add(render(rule.getResource(), op));
        }
      }
      Set<String> code = component.bindings("im.").stream().map(b -> b.pattern().resourceType() + " "
          + b.pattern().patternType() + " " + b.pattern().name() + " " + b.entry().operation())
          .collect(Collectors.toCollection(TreeSet::new));
      assertThat(declared).as("users.yaml " + component.principalName() + " = ComponentAcls").isEqualTo(code);
    }
    // Beyond the components: only the registry's own user.
    assertThat(users).containsExactlyInAnyOrderElementsOf(Stream.concat(
        ComponentAcls.table(TopicNames.withPrefix("im.")).stream().map(ComponentAcls::principalName),
        Stream.of("im-apicurio")).toList());
  }

  /** A Strimzi ACL rule's resource and one operation, as Kafka's AclBinding names them. */
  private static String render(io.strimzi.api.kafka.model.user.acl.AclRuleResource resource, AclOperation op) {
    String kafkaOp = op.toValue().replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
    if (resource instanceof AclRuleTopicResource t) {
      return "TOPIC " + pattern(t.getPatternType()) + " " + t.getName() + " " + kafkaOp;
    }
    if (resource instanceof io.strimzi.api.kafka.model.user.acl.AclRuleGroupResource g) {
      return "GROUP " + pattern(g.getPatternType()) + " " + g.getName() + " " + kafkaOp;
    }
    if (resource instanceof io.strimzi.api.kafka.model.user.acl.AclRuleTransactionalIdResource t) {
      return "TRANSACTIONAL_ID " + pattern(t.getPatternType()) + " " + t.getName() + " " + kafkaOp;
    }
    return resource.getType() + " " + kafkaOp;
  }

  private static String pattern(AclResourcePatternType type) {
    return type == AclResourcePatternType.PREFIX ? "PREFIXED" : "LITERAL";
  }

  // --- helpers

  private static boolean allows(List<AclRule> acls, String topic, AclOperation op) {
    return acls.stream().anyMatch(rule -> rule.getResource() instanceof AclRuleTopicResource r
        && (r.getPatternType() == AclResourcePatternType.PREFIX ? topic.startsWith(r.getName())
            : topic.equals(r.getName()))
        && (rule.getOperations().contains(op) || rule.getOperations().contains(AclOperation.ALL)));
  }

  private static List<AclRule> acls(String user) {
    KafkaUser u = (KafkaUser) find("KafkaUser", user);
    assertThat(u.getSpec().getAuthentication().getType()).isEqualTo("scram-sha-512");
    return ((KafkaUserAuthorizationSimple) u.getSpec().getAuthorization()).getAcls();
  }

  /** Names the code reads: string literals IM_x / KAFKA_x / SCHEMA_x in main sources, or a Kafka client property. */
  private static boolean knownEnvName(String name) throws IOException {
    if (codeEnvNames().contains(name)) {
      return true;
    }
    if (name.startsWith("KAFKA_")) {
      String property = name.substring("KAFKA_".length()).toLowerCase(Locale.ROOT).replace('_', '.');
      Set<String> client = new HashSet<>(ProducerConfig.configNames());
      client.addAll(ConsumerConfig.configNames());
      client.addAll(AdminClientConfig.configNames());
      client.addAll(StreamsConfig.configDef().names());
      return client.contains(property);
    }
    return false;
  }

  private static Set<String> codeEnvNames;

  private static synchronized Set<String> codeEnvNames() throws IOException {
    if (codeEnvNames == null) {
      Pattern literal = Pattern.compile("\"((?:IM|KAFKA|SCHEMA)_[A-Z0-9_]+)\"");
      Set<String> names = new TreeSet<>();
      try (Stream<Path> files = Files.walk(Path.of(".."))) {
        for (Path f : files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/"))
            .toList()) {
          Matcher m = literal.matcher(Files.readString(f));
          while (m.find()) {
            names.add(m.group(1));
          }
        }
      }
      // bin/im reads a few itself (IM_JAVA_OPTS, IM_APICURIO_HOME).
      Matcher m = Pattern.compile("\\$\\{?(IM_[A-Z0-9_]+)").matcher(Files.readString(Path.of("../bin/im")));
      while (m.find()) {
        names.add(m.group(1));
      }
      codeEnvNames = names;
    }
    return codeEnvNames;
  }

  private static Map<String, PodTemplateSpec> pods() {
    Map<String, PodTemplateSpec> pods = new HashMap<>();
    for (HasMetadata r : base) {
      if (r instanceof Deployment || r instanceof StatefulSet) {
        pods.put(r.getMetadata().getName(), pod(r));
      }
    }
    return pods;
  }

  private static PodTemplateSpec pod(HasMetadata r) {
    return r instanceof Deployment d ? d.getSpec().getTemplate() : ((StatefulSet) r).getSpec().getTemplate();
  }

  private static List<Container> containers(PodTemplateSpec pod) {
    return pod.getSpec().getContainers();
  }

  private static Map<String, String> env(Container c) {
    Map<String, String> env = new HashMap<>();
    for (EnvVar v : c.getEnv()) {
      env.put(v.getName(), v.getValue() == null ? "<from " + v.getValueFrom() + ">" : v.getValue());
    }
    return env;
  }

  private static HasMetadata find(String kind, String name) {
    return base.stream().filter(r -> r.getKind().equals(kind) && r.getMetadata().getName().equals(name))
        .findFirst().orElseThrow(() -> new AssertionError("no " + kind + " " + name));
  }

  private static List<Path> yamlFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
  }

  private static List<HasMetadata> parseAll(Path file) throws IOException {
    List<HasMetadata> resources = new ArrayList<>();
    try (YAMLParser parser = new YAMLFactory().createParser(file.toFile())) {
      for (JsonNode doc : YAML.readValues(parser, JsonNode.class).readAll()) {
        if (doc == null || doc.isNull() || doc.isEmpty()) {
          continue;
        }
        String kind = doc.path("kind").asText();
        Class<? extends HasMetadata> type = KINDS.get(kind);
        assertThat(type).as(file + ": kind " + kind + " has a typed model here").isNotNull();
        HasMetadata resource = YAML.treeToValue(doc, type);
        assertThat(resource.getApiVersion()).as(file + " " + kind).isEqualTo(doc.path("apiVersion").asText());
        resources.add(resource);
      }
    }
    return resources;
  }

  /** The models keep unknown fields in additionalProperties instead of failing: any there is a typo. */
  private static void assertNoUnknownFields(Object root, String where) {
    walk(root, where, new IdentityHashMap<>());
  }

  private static void walk(Object o, String where, IdentityHashMap<Object, Boolean> seen) {
    if (o == null || seen.put(o, Boolean.TRUE) != null) {
      return;
    }
    if (o instanceof Collection<?> c) {
      c.forEach(x -> walk(x, where, seen));
      return;
    }
    if (o instanceof Map<?, ?> m) {
      m.values().forEach(x -> walk(x, where, seen));
      return;
    }
    String pkg = o.getClass().getPackageName();
    if (!pkg.startsWith("io.fabric8") && !pkg.startsWith("io.strimzi")) {
      return;
    }
    for (Method m : o.getClass().getMethods()) {
      if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers()) || !m.getName().startsWith("get")
          || m.getName().equals("getClass")) {
        continue;
      }
      Object value;
      try {
        value = m.invoke(o);
      } catch (ReflectiveOperationException | RuntimeException e) {
        continue;
      }
      if (m.getName().equals("getAdditionalProperties") && value instanceof Map<?, ?> extra) {
        assertThat(extra).as(where + ": unknown fields in " + o.getClass().getSimpleName()).isEmpty();
      } else {
        walk(value, where, seen);
      }
    }
  }
}
