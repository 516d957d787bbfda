package dev.impipe.notify.provider;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** How a provider's plain HTTP status decides what happens to a send. */
class SendOutcomeTest {

  private static final Optional<Duration> AFTER = Optional.of(Duration.ofSeconds(30));

  private static SendOutcome of(int status) {
    return SendOutcome.ofStatus(status, "r" + status, AFTER);
  }

  @Test
  void everyTwoHundredIsDelivered() {
    assertThat(of(200)).isEqualTo(new SendOutcome.Delivered(200));
    assertThat(of(201).reason()).isEqualTo("delivered");
    assertThat(of(299)).isEqualTo(new SendOutcome.Delivered(299));
  }

  @Test
  void aStatusJustOutsideTheTwoHundredsIsNotDelivered() {
    assertThat(of(199)).isEqualTo(new SendOutcome.Failed(199, "r199"));
    assertThat(of(300)).isEqualTo(new SendOutcome.Failed(300, "r300"));
  }

  @Test
  void notFoundAndGoneRemoveTheRegistration() {
    assertThat(of(404)).isEqualTo(new SendOutcome.Gone(404, "r404"));
    assertThat(of(410)).isEqualTo(new SendOutcome.Gone(410, "r410"));
  }

  @Test
  void tooManyRequestsAndServerErrorsAreRetriedAfterWhatTheProviderSaid() {
    assertThat(of(429)).isEqualTo(new SendOutcome.Retry(429, "r429", AFTER));
    assertThat(of(500)).isEqualTo(new SendOutcome.Retry(500, "r500", AFTER));
    assertThat(of(503)).isEqualTo(new SendOutcome.Retry(503, "r503", AFTER));
    // The last client error below them fails for good
    assertThat(of(499)).isEqualTo(new SendOutcome.Failed(499, "r499"));
  }

  @Test
  void otherClientErrorsFailForGood() {
    assertThat(of(400)).isEqualTo(new SendOutcome.Failed(400, "r400"));
    assertThat(of(403)).isEqualTo(new SendOutcome.Failed(403, "r403"));
  }
}
