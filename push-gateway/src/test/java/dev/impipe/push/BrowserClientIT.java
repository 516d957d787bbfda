package dev.impipe.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
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

  @Test
  void twoUsersInTwoBrowsersChatLiveAndTheReceiverSeesTheConversationAfterAReload() throws Exception {
    Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER),
        "Chromium not found at " + CHROMIUM + " / " + DRIVER + ": install the Debian packages chromium and"
            + " chromium-driver (apt-get install -y chromium chromium-driver) to run the browser IT");
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
      await().atMost(Duration.ofSeconds(30))
          .until(() -> !b.findElements(By.cssSelector("#conversations li[data-id='d:alice:bob']")).isEmpty());
      bob.findElement(By.cssSelector("#conversations li[data-id='d:alice:bob']")).click();
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

  private static WebDriver browser() {
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
