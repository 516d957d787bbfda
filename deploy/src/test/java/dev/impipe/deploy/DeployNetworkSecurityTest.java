package dev.impipe.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.IngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.IngressTLS;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import io.strimzi.api.kafka.model.kafka.Kafka;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The edge of the Kubernetes deployment: tokens only for this API (issuer and audience pinned), TLS at the
 * Ingress, and NetworkPolicies that let only the ingress controller and the pipeline itself reach the HTTP port,
 * and only the pipeline (and the registry) reach Kafka and the registry.
 */
class DeployNetworkSecurityTest {

  private static final Path BASE = Path.of("k8s", "base");
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
  private static final List<JsonNode> DOCS = new ArrayList<>();

  @BeforeAll
  static void parse() throws IOException {
    try (Stream<Path> files = Files.list(BASE)) {
      for (Path file : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        try (YAMLParser parser = new YAMLFactory().createParser(file.toFile())) {
          for (JsonNode doc : YAML.readValues(parser, JsonNode.class).readAll()) {
            if (doc != null && doc.has("kind")) {
              DOCS.add(doc);
            }
          }
        }
      }
    }
  }

  @Test
  void everyComponentAcceptsOnlyTokensIssuedForThisApi() throws IOException {
    ConfigMap config = one("ConfigMap", "im-config", ConfigMap.class);
    assertThat(config.getData().get("IM_AUTH_ISSUER")).isNotBlank();
    assertThat(config.getData().get("IM_AUTH_AUDIENCE")).isNotBlank();
    Map<String, PodTemplateSpec> pods = pipelinePods();
    assertThat(pods).hasSize(7);
    pods.forEach((name, pod) -> {
      Container c = pod.getSpec().getContainers().get(0);
      for (String key : List.of("IM_AUTH_JWKS_URL", "IM_AUTH_ISSUER", "IM_AUTH_AUDIENCE")) {
        EnvVar v = c.getEnv().stream().filter(e -> e.getName().equals(key)).findFirst()
            .orElseThrow(() -> new AssertionError(name + " has no " + key));
        assertThat(v.getValueFrom().getConfigMapKeyRef().getName()).as(name + " " + key).isEqualTo("im-config");
        assertThat(v.getValueFrom().getConfigMapKeyRef().getKey()).as(name + " " + key).isEqualTo(key);
      }
      assertThat(c.getEnv()).as(name + ": no dev tokens in a deployment")
          .noneMatch(e -> e.getName().equals("IM_AUTH_DEV_TOKENS"));
    });
  }

  @Test
  void theIngressServesEveryHostOverTls() throws IOException {
    Ingress ingress = one("Ingress", "im-api", Ingress.class);
    List<String> tlsHosts = ingress.getSpec().getTls().stream().map(IngressTLS::getHosts).flatMap(List::stream)
        .toList();
    assertThat(ingress.getSpec().getTls()).allMatch(t -> t.getSecretName() != null && !t.getSecretName().isBlank());
    assertThat(ingress.getSpec().getRules()).extracting(IngressRule::getHost).isNotEmpty()
        .allMatch(tlsHosts::contains);
    assertThat(ingress.getMetadata().getAnnotations()).containsEntry(
        "nginx.ingress.kubernetes.io/force-ssl-redirect", "true");
  }

  @Test
  void onlyTheIngressControllerAndThePipelineReachThePipelinesHttpPort() throws IOException {
    NetworkPolicy policy = one("NetworkPolicy", "im-pipeline", NetworkPolicy.class);
    // It selects every pipeline pod
    pipelinePods().forEach((name, pod) -> assertThat(selects(policy.getSpec().getPodSelector(),
        pod.getMetadata().getLabels())).as(name).isTrue());
    assertThat(policy.getSpec().getPolicyTypes()).containsExactlyInAnyOrder("Ingress", "Egress");
    // Ingress: one rule, to the http port, from the ingress controller's pods and the pipeline's own
    assertThat(policy.getSpec().getIngress()).hasSize(1);
    NetworkPolicyIngressRule in = policy.getSpec().getIngress().get(0);
    assertThat(in.getPorts()).extracting(p -> p.getPort().getStrVal()).containsExactly("http");
    assertThat(in.getFrom()).hasSize(2);
    NetworkPolicyPeer controller = in.getFrom().get(0);
    assertThat(controller.getNamespaceSelector().getMatchLabels())
        .containsEntry("kubernetes.io/metadata.name", "ingress-nginx");
    assertThat(controller.getPodSelector()).as("only the controller's pods of that namespace").isNotNull();
    assertThat(in.getFrom().get(1).getNamespaceSelector()).as("the pipeline's own pods: this namespace").isNull();
    pipelinePods().forEach((name, pod) -> assertThat(selects(in.getFrom().get(1).getPodSelector(),
        pod.getMetadata().getLabels())).as(name).isTrue());
    assertThat(selects(in.getFrom().get(1).getPodSelector(), Map.of("app.kubernetes.io/name", "im-apicurio")))
        .isFalse();
    // Egress: Kafka's listener, the registry, each other, DNS, HTTPS; nothing else
    List<Integer> ports = policy.getSpec().getEgress().stream().map(NetworkPolicyEgressRule::getPorts)
        .flatMap(List::stream).map(NetworkPolicyPort::getPort).map(p -> p.getIntVal()).toList();
    assertThat(ports).containsExactlyInAnyOrder(9093, 8080, 8080, 53, 53, 443);
    NetworkPolicyEgressRule kafka = policy.getSpec().getEgress().get(0);
    assertThat(kafka.getTo().get(0).getPodSelector().getMatchLabels()).containsEntry("strimzi.io/cluster", "im");
  }

  @Test
  void onlyThePipelineReachesTheRegistryAndOnlyThePipelineAndTheRegistryReachKafka() throws IOException {
    NetworkPolicy registry = one("NetworkPolicy", "im-apicurio", NetworkPolicy.class);
    assertThat(selects(registry.getSpec().getPodSelector(), Map.of("app.kubernetes.io/name", "im-apicurio")))
        .isTrue();
    List<NetworkPolicyPeer> from = registry.getSpec().getIngress().get(0).getFrom();
    pipelinePods().forEach((name, pod) -> assertThat(from).as(name)
        .anyMatch(p -> selects(p.getPodSelector(), pod.getMetadata().getLabels())));
    assertThat(from).noneMatch(p -> selects(p.getPodSelector(), Map.of("app.kubernetes.io/name", "other")));

    Kafka kafka = one("Kafka", "im", Kafka.class);
    Map<String, PodTemplateSpec> pipeline = pipelinePods();
    kafka.getSpec().getKafka().getListeners().forEach(l -> {
      assertThat(l.getNetworkPolicyPeers()).as(l.getName()).isNotEmpty();
      pipeline.forEach((name, pod) -> assertThat(l.getNetworkPolicyPeers()).as(name)
          .anyMatch(p -> selects(p.getPodSelector(), pod.getMetadata().getLabels())));
      assertThat(l.getNetworkPolicyPeers())
          .anyMatch(p -> selects(p.getPodSelector(), Map.of("app.kubernetes.io/name", "im-apicurio")))
          .noneMatch(p -> selects(p.getPodSelector(), Map.of("app.kubernetes.io/name", "other")));
    });
  }

  /** Whether {@code selector} (matchLabels and In/NotIn/Exists expressions) selects a pod with {@code labels}. */
  private static boolean selects(LabelSelector selector, Map<String, String> labels) {
    if (selector == null) {
      return false;
    }
    if (selector.getMatchLabels() != null) {
      for (Map.Entry<String, String> e : selector.getMatchLabels().entrySet()) {
        if (!e.getValue().equals(labels.get(e.getKey()))) {
          return false;
        }
      }
    }
    if (selector.getMatchExpressions() != null) {
      for (LabelSelectorRequirement r : selector.getMatchExpressions()) {
        String value = labels.get(r.getKey());
        boolean ok = switch (r.getOperator()) {
          case "In" -> value != null && r.getValues().contains(value);
          case "NotIn" -> value == null || !r.getValues().contains(value);
          case "Exists" -> value != null;
          case "DoesNotExist" -> value == null;
          default -> throw new AssertionError("operator " + r.getOperator());
        };
        if (!ok) {
          return false;
        }
      }
    }
    return true;
  }

  private static Map<String, PodTemplateSpec> pipelinePods() throws IOException {
    Map<String, PodTemplateSpec> pods = new HashMap<>();
    for (JsonNode doc : DOCS) {
      String kind = doc.path("kind").asText();
      PodTemplateSpec pod = kind.equals("Deployment") ? YAML.treeToValue(doc, Deployment.class).getSpec().getTemplate()
          : kind.equals("StatefulSet") ? YAML.treeToValue(doc, StatefulSet.class).getSpec().getTemplate() : null;
      if (pod != null && pod.getSpec().getContainers().get(0).getImage().startsWith("im-pipeline:")) {
        pods.put(doc.path("metadata").path("name").asText(), pod);
      }
    }
    return pods;
  }

  private static <T> T one(String kind, String name, Class<T> type) throws IOException {
    JsonNode doc = DOCS.stream().filter(d -> d.path("kind").asText().equals(kind)
        && d.path("metadata").path("name").asText().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
    return YAML.treeToValue(doc, type);
  }
}
