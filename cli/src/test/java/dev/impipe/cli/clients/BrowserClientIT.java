package dev.impipe.cli.clients;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;

/**
 * The browser client in a real headless Chromium against the whole pipeline on the real broker: two users in two
 * browser sessions, one sends, the other's page shows it live, and after a reload from history; the signed-out
 * and signed-in states never show together, the page fits a phone, and no page logs a console error. Screenshots
 * of each state land in {@code target/screenshots}. Skipped where Chromium is not installed (Debian packages
 * {@code chromium} and {@code chromium-driver}).
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class BrowserClientIT {

  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path DRIVER = Path.of("/usr/bin/chromedriver");
  /** Where the stubbed push service's subscriptions point (the pipeline's only allowed Web Push prefix). */
  private static final String TEST_PUSH_SERVICE = LocalPipeline.PUSH_SERVICE;
  /**
   * Replaces PushManager.subscribe: a subscription at {@code arguments[0]} with a real P-256 key and a random auth
   * secret; remembers the VAPID key it was asked for ({@code window.subscribedWith}, base64url) and the secret.
   */
  private static final String STUB_SUBSCRIBE = """
      const endpoint = arguments[0];
      const b64u = (b) => btoa(String.fromCharCode(...new Uint8Array(b)))
        .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
      PushManager.prototype.subscribe = async function (options) {
        const pair = await crypto.subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']);
        const keys = { p256dh: b64u(await crypto.subtle.exportKey('raw', pair.publicKey)),
          auth: b64u(crypto.getRandomValues(new Uint8Array(16))) };
        window.subscribedWith = b64u(options.applicationServerKey);
        window.subscribedAuth = keys.auth;
        return { endpoint, expirationTime: null, options: { ...options },
          toJSON: () => ({ endpoint, expirationTime: null, keys }), unsubscribe: async () => true };
      };
      """;
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void twoUsersInTwoBrowsersChatLiveAndTheReceiverSeesTheConversationAfterAReload() throws Exception {
    assumeChromium();
    Path shots = Path.of("target", "screenshots");
    Files.createDirectories(shots);
    List<String> consoleErrors = new ArrayList<>();
    WebDriver alice = null;
    WebDriver bob = null;
    try (LocalPipeline pipeline = LocalPipeline.start("browser")) {
      String url = pipeline.url();
      alice = browser();
      bob = browser();

      // Given alice on the page, signed out: only the sign-in form shows
      alice.get(url);
      assertThat(alice.findElement(By.id("login")).isDisplayed()).isTrue();
      assertThat(alice.findElement(By.id("app")).isDisplayed()).as("the chat panel before sign-in").isFalse();
      screenshot(alice, shots.resolve("browser-signed-out.png"));

      // Given alice and bob signed in, and bob has his chat with alice open
      signIn(alice, url, "alice");
      assertThat(alice.findElement(By.id("login")).isDisplayed()).as("the sign-in form once signed in").isFalse();
      signIn(bob, url, "bob");
      openChat(bob, "alice");
      openChat(alice, "bob");

      // When alice sends
      alice.findElement(By.id("text")).sendKeys("hello bob, live");
      alice.findElement(By.id("send")).click();

      // Then bob's page shows it without any action of his
      WebDriver b = bob;
      await().atMost(Duration.ofSeconds(30)).until(() -> messages(b).contains("hello bob, live"));
      screenshot(alice, shots.resolve("browser-signed-in.png"));
      screenshot(bob, shots.resolve("browser-bob-live.png"));
      // and alice's own page shows it too (her entry came back over her socket)
      WebDriver a = alice;
      await().atMost(Duration.ofSeconds(30)).until(() -> messages(a).contains("hello bob, live"));

      // When bob reloads the page
      consoleErrors.addAll(severe(bob, "bob before the reload"));
      bob.navigate().refresh();

      // Then the conversation is listed again and its history holds the message
      // (the list may render again between finding the entry and clicking it: find and click until a click lands)
      await().atMost(Duration.ofSeconds(30)).ignoreException(StaleElementReferenceException.class).until(() -> {
        List<WebElement> entry = b.findElements(By.cssSelector("#conversations li[data-id='d:alice:bob']"));
        if (entry.isEmpty()) {
          return false;
        }
        entry.get(0).click();
        return true;
      });
      await().atMost(Duration.ofSeconds(30)).until(() -> messages(b).contains("hello bob, live"));
      assertThat(messages(bob)).containsOnlyOnce("hello bob, live");
      screenshot(bob, shots.resolve("browser-bob-after-reload.png"));

      // When alice's window is phone-sized: the open conversation takes the screen, the back arrow the list
      alice.manage().window().setSize(new Dimension(390, 844));
      assertThat(alice.findElement(By.id("messages")).isDisplayed()).isTrue();
      assertThat(alice.findElement(By.id("sidebar")).isDisplayed()).as("the list beside a chat on a phone").isFalse();
      screenshot(alice, shots.resolve("browser-phone-conversation.png"));
      alice.findElement(By.id("back")).click();
      assertThat(alice.findElement(By.id("sidebar")).isDisplayed()).isTrue();
      assertThat(alice.findElement(By.id("conversations")).getText()).contains("bob");
      screenshot(alice, shots.resolve("browser-phone-list.png"));

      // And no page logged a console error (a 404, an exception, a refused request)
      consoleErrors.addAll(severe(alice, "alice"));
      consoleErrors.addAll(severe(bob, "bob"));
      assertThat(consoleErrors).isEmpty();
    } finally {
      if (alice != null) {
        alice.quit();
      }
      if (bob != null) {
        bob.quit();
      }
    }
  }

  @Test
  void enableNotificationsRegistersTheSubscriptionAndTheServiceWorkerShowsAPush() throws Exception {
    assumeChromium();
    List<String> consoleErrors = new ArrayList<>();
    ChromeDriver carol = null;
    try (LocalPipeline pipeline = LocalPipeline.start("browser-push")) {
      String url = pipeline.url();
      carol = browser();
      // Given carol signed in, notifications allowed for the page (the browser's own prompt cannot be clicked
      // headless), and the push service stubbed: PushManager.subscribe answers a subscription with a test endpoint
      // and real keys, as it would after a round trip to the browser vendor's service (unreachable from here)
      carol.executeCdpCommand("Browser.grantPermissions", Map.of("origin", url.replaceAll("/$", ""),
          "permissions", List.of("notifications")));
      signIn(carol, url, "carol");
      carol.executeScript(STUB_SUBSCRIBE, TEST_PUSH_SERVICE + "carol-1");
      ChromeDriver c = carol;
      await().atMost(Duration.ofSeconds(30)).until(() -> c.findElement(By.id("notify")).isDisplayed());

      // When she clicks "Enable notifications"
      carol.findElement(By.id("notify")).click();

      // Then the page says they are on, the subscription was made with the server's VAPID key
      await().atMost(Duration.ofSeconds(30)).until(() -> c.findElement(By.id("notify-note")).getText()
          .equals("notifications on"));
      @SuppressWarnings("unchecked")
      Map<String, Object> session = (Map<String, Object>) carol.executeScript(
          "return JSON.parse(sessionStorage.getItem('im-session'))");
      String token = (String) session.get("token");
      String devicePush = url + "v1/users/carol/devices/" + session.get("device") + "/push";
      JsonNode config = get(url + "v1/push/config", token, 200);
      assertThat(carol.executeScript("return window.subscribedWith"))
          .isEqualTo(config.path("vapidPublicKey").asText());
      // and the server holds the registration for her device (once stored), its secrets not echoed
      await().atMost(Duration.ofSeconds(30)).until(() -> status(devicePush, token) == 200);
      JsonNode registration = get(devicePush, token, 200);
      assertThat(registration.path("provider").asText()).isEqualTo("webpush");
      assertThat(registration.path("pushService").asText()).isEqualTo("http://127.0.0.1:9");
      assertThat(registration.toString()).doesNotContain("carol-1")
          .doesNotContain((String) carol.executeScript("return window.subscribedAuth"));
      Files.createDirectories(Path.of("target", "screenshots"));
      screenshot(carol, Path.of("target", "screenshots", "browser-notifications-on.png"));

      // And the service worker is active at /sw.js for the whole page
      assertThat(carol.executeAsyncScript("navigator.serviceWorker.getRegistration('/sw.js')"
          + ".then((r) => arguments[0](r && r.active ? r.scope : 'none'))")).isEqualTo(url);

      // When the push service delivers a notification for two messages of alice to the worker
      carol.executeCdpCommand("ServiceWorker.enable", Map.of());
      String payload = "{\"notificationId\":\"n-1\",\"conversationId\":\"d:alice:carol\",\"conversationType\""
          + ":\"DIRECT\",\"senderId\":\"alice\",\"preview\":\"lunch?\",\"seq\":7,\"count\":2}";
      for (int id = 0; id < 4; id++) { // registration ids count from 0 in a new profile; unknown ids are ignored
        carol.executeCdpCommand("ServiceWorker.deliverPushMessage", Map.of("origin", url.replaceAll("/$", ""),
            "registrationId", String.valueOf(id), "data", payload));
      }

      // Then it shows one notification: the sender as title, the preview as body, tagged with the conversation
      await().atMost(Duration.ofSeconds(30)).until(() -> !shown(c).isEmpty());
      assertThat(shown(c)).containsExactly(Map.of("title", "alice", "body", "lunch?", "tag", "d:alice:carol",
          "conversationId", "d:alice:carol"));

      // When the page is opened from a notification (the worker opens /#c=<conversation> when no page is open)
      carol.get("about:blank");
      carol.get(url + "#c=d:alice:carol");

      // Then it opens that conversation
      await().atMost(Duration.ofSeconds(30)).until(() -> c.findElement(By.id("title")).getText().equals("alice"));
      consoleErrors.addAll(severe(carol, "carol"));
      assertThat(consoleErrors).isEmpty();
    } finally {
      if (carol != null) {
        carol.quit();
      }
    }
  }

  /** The notifications the page's service worker shows: title, body, tag and the payload's conversation. */
  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> shown(ChromeDriver driver) {
    return (List<Map<String, Object>>) driver.executeAsyncScript("navigator.serviceWorker.ready"
        + ".then((r) => r.getNotifications()).then((ns) => arguments[0](ns.map((n) => ({title: n.title,"
        + " body: n.body, tag: n.tag, conversationId: n.data && n.data.conversationId}))))");
  }

  private static JsonNode get(String url, String token, int status) throws Exception {
    HttpResponse<String> r = send(url, token);
    assertThat(r.statusCode()).as("GET " + url + ": " + r.body()).isEqualTo(status);
    return JSON.readTree(r.body());
  }

  private static int status(String url, String token) throws Exception {
    return send(url, token).statusCode();
  }

  private static HttpResponse<String> send(String url, String token) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + token).GET()
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void assumeChromium() {
    Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER),
        "Chromium not found at " + CHROMIUM + " / " + DRIVER + ": install the Debian packages chromium and"
            + " chromium-driver (apt-get install -y chromium chromium-driver) to run the browser IT");
  }

  private static ChromeDriver browser() {
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        "--window-size=1100,700");
    options.setCapability("goog:loggingPrefs", Map.of(LogType.BROWSER, "ALL"));
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
        .usingAnyFreePort().build();
    return new ChromeDriver(service, options);
  }

  /** The console errors the page logged since the last call. */
  private static List<String> severe(WebDriver driver, String who) {
    return driver.manage().logs().get(LogType.BROWSER).getAll().stream()
        .filter(e -> e.getLevel().intValue() >= Level.SEVERE.intValue())
        .map(LogEntry::getMessage).map(m -> who + ": " + m).toList();
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
