package dev.impipe.cli.clients;

import static org.awaitility.Awaitility.await;

import dev.impipe.ack.AckTimeoutComponent;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.ingest.IngestComponent;
import dev.impipe.notify.NotifyComponent;
import dev.impipe.push.PushGatewayComponent;
import dev.impipe.edge.app.PipelineRuntime;
import dev.impipe.edge.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.embedded.Dirs;
import dev.impipe.testkit.TestTmpDir;
import dev.impipe.testkit.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;

/**
 * The whole pipeline in this JVM (ingest, fan-out, inbox store, ACK wheel, gateway, notify) on the real broker, with dev
 * tokens on (local mode), under unique topic names: what the browser and JavaScript client ITs talk to.
 */
final class LocalPipeline implements AutoCloseable {

  /**
   * The only Web Push endpoint prefix the notify component accepts here: a browser test's stubbed subscriptions point
   * under it (nothing listens: no test leaves a message unreceived long enough to be notified).
   */
  static final String PUSH_SERVICE = "http://127.0.0.1:9/push-test/";

  private final PipelineRuntime runtime;
  private final Path state;

  private LocalPipeline(PipelineRuntime runtime, Path state) {
    this.runtime = runtime;
    this.state = state;
  }

  /** Starts every component and waits until the instance is healthy. */
  static LocalPipeline start(String name) throws Exception {
    return start(name, Map.of());
  }

  /** The same with more settings ({@code IM_*} variables). */
  static LocalPipeline start(String name, Map<String, String> settings) throws Exception {
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique(name) + ".";
    Path state = TestTmpDir.newDir(name + "-it-");
    Map<String, String> envMap = new HashMap<>(TestTokens.env());
    envMap.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "2", "IM_CONVERSATION_PARTITIONS", "2",
        "IM_AUTH_DEV_TOKENS", "true", "IM_NOTIFY_PUSH_ENDPOINTS", PUSH_SERVICE,
        "IM_NOTIFY_VAPID_KEY_FILE", vapidKey(state).toString(), "IM_NOTIFY_VAPID_SUBJECT", "mailto:it@example.com"));
    envMap.putAll(settings);
    ImConfig config = ImConfig.fromEnv(envMap).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    PipelineRuntime runtime = new PipelineRuntime(config.withHttpPort(0, state), envMap, topics);
    LocalPipeline pipeline = new LocalPipeline(runtime, state);
    try {
      runtime.start(List.of(new IngestComponent(), new FanoutComponent(), new InboxStoreComponent(),
          new AckTimeoutComponent(), new PushGatewayComponent(), new NotifyComponent()));
      await().atMost(Duration.ofSeconds(120)).until(runtime::healthy);
      return pipeline;
    } catch (Exception | AssertionError e) {
      pipeline.close();
      throw e;
    }
  }

  /** A Web Push key pair as an operator makes it (PEM PKCS#8, 0600), as local mode generates into its data dir. */
  private static Path vapidKey(Path dir) throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    Path file = dir.resolve("vapid.pem");
    Files.writeString(file, "-----BEGIN PRIVATE KEY-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
            .encodeToString(generator.generateKeyPair().getPrivate().getEncoded())
        + "\n-----END PRIVATE KEY-----\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    return file;
  }

  /** {@code http://127.0.0.1:<port>/}. */
  String url() {
    return "http://127.0.0.1:" + runtime.http().port() + "/";
  }

  @Override
  public void close() {
    runtime.close();
    Dirs.deleteRecursively(state);
  }
}
