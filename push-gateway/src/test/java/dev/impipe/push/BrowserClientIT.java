package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.impipe.ack.AckTimeoutComponent;
import dev.impipe.fanout.FanoutComponent;
import dev.impipe.inbox.InboxStoreComponent;
import dev.impipe.ingest.IngestComponent;
import dev.impipe.runtime.app.PipelineRuntime;
import dev.impipe.runtime.auth.TestTokens;
import dev.impipe.runtime.config.ImConfig;
import dev.impipe.runtime.testing.ItEnvironment;
import dev.impipe.runtime.topics.ImTopics;
import dev.impipe.runtime.topics.TopicCatalog;
import dev.impipe.runtime.topics.TopicNames;
import dev.impipe.runtime.topics.TopicProvisioner;
import dev.impipe.schemas.registry.RestSchemaRegistryClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The browser client in a real headless Chromium against the whole pipeline on the real broker: two users in two
 * browser sessions, one sends, the other's page shows it live, and after a reload from history. Skipped where
 * Chromium is not installed (Debian packages {@code chromium} and {@code chromium-driver}).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class BrowserClientIT {

  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path DRIVER = Path.of("/usr/bin/chromedriver");

  @Test
  void twoUsersInTwoBrowsersChatLiveAndTheReceiverSeesTheConversationAfterAReload() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER),
        "Chromium not found at " + CHROMIUM + " / " + DRIVER + ": install the Debian packages chromium and"
            + " chromium-driver (apt-get install -y chromium chromium-driver) to run the browser IT");
    ItEnvironment.Endpoints env = ItEnvironment.get();
    String prefix = ItEnvironment.unique("browser") + ".";
    Map<String, String> envMap = new HashMap<>(TestTokens.env());
    envMap.putAll(Map.of("IM_TOPIC_PREFIX", prefix, "IM_USER_PARTITIONS", "2", "IM_CONVERSATION_PARTITIONS", "2",
        "IM_AUTH_DEV_TOKENS", "true"));
    ImConfig config = ImConfig.fromEnv(envMap).withEndpoints(env.bootstrapServers(), env.schemaRegistryUrl());
    TopicNames names = TopicNames.withPrefix(prefix);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", env.bootstrapServers()))) {
      new TopicProvisioner(admin, (short) 1).ensure(TopicCatalog.specs(names, config));
    }
    ImTopics topics = new ImTopics(names, new RestSchemaRegistryClient(env.schemaRegistryUrl()));
    Path state = Files.createTempDirectory("browser-it-");
    Path shots = Path.of("target", "screenshots");
    Files.createDirectories(shots);
    PipelineRuntime runtime = new PipelineRuntime(config.withHttpPort(0, state), envMap, topics);
    WebDriver alice = null;
    WebDriver bob = null;
    try {
      runtime.start(List.of(new IngestComponent(), new FanoutComponent(), new InboxStoreComponent(),
          new AckTimeoutComponent(), new PushGatewayComponent()));
      await().atMost(Duration.ofSeconds(120)).until(runtime::healthy);
      String url = "http://127.0.0.1:" + runtime.http().port() + "/";
      alice = browser();
      bob = browser();

      // Given alice and bob signed in, and bob has his chat with alice open
      signIn(alice, url, "alice");
      signIn(bob, url, "bob");
      openChat(bob, "alice");
      openChat(alice, "bob");

      // When alice sends
      alice.findElement(By.id("text")).sendKeys("hello bob, live");
      alice.findElement(By.id("send")).click();

      // Then bob's page shows it without any action of his
      WebDriver b = bob;
      await().atMost(Duration.ofSeconds(30)).until(() -> messages(b).contains("hello bob, live"));
      screenshot(alice, shots.resolve("browser-alice-sent.png"));
      screenshot(bob, shots.resolve("browser-bob-live.png"));
      // and alice's own page shows it too (her entry came back over her socket)
      WebDriver a = alice;
      await().atMost(Duration.ofSeconds(30)).until(() -> messages(a).contains("hello bob, live"));

      // When bob reloads the page
      bob.navigate().refresh();

      // Then the conversation is listed again and its history holds the message
      await().atMost(Duration.ofSeconds(30))
          .until(() -> !b.findElements(By.cssSelector("#conversations li[data-id='d:alice:bob']")).isEmpty());
      bob.findElement(By.cssSelector("#conversations li[data-id='d:alice:bob']")).click();
      await().atMost(Duration.ofSeconds(30)).until(() -> messages(b).contains("hello bob, live"));
      assertThat(messages(bob)).containsOnlyOnce("hello bob, live");
      screenshot(bob, shots.resolve("browser-bob-after-reload.png"));
    } finally {
      if (alice != null) {
        alice.quit();
      }
      if (bob != null) {
        bob.quit();
      }
      runtime.close();
      dev.impipe.runtime.embedded.Dirs.deleteRecursively(state);
    }
  }

  private static WebDriver browser() {
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        "--window-size=1100,700");
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
        .usingAnyFreePort().build();
    return new ChromeDriver(service, options);
  }

  private static void signIn(WebDriver driver, String url, String user) {
    driver.get(url);
    driver.findElement(By.id("login-user")).sendKeys(user);
    driver.findElement(By.id("login-button")).click();
    await().atMost(Duration.ofSeconds(30)).until(() -> driver.findElement(By.id("status")).getText()
        .equals("online"));
  }

  private static void openChat(WebDriver driver, String other) {
    driver.findElement(By.id("new-to")).sendKeys(other);
    driver.findElement(By.id("chat-button")).click();
    await().atMost(Duration.ofSeconds(10)).until(() -> driver.findElement(By.id("title")).getText().equals(other));
  }

  private static String messages(WebDriver driver) {
    return driver.findElement(By.id("messages")).getText();
  }

  private static void screenshot(WebDriver driver, Path to) throws java.io.IOException {
    Files.write(to, ((TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES));
  }
}
