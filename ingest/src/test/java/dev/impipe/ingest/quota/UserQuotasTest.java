package dev.impipe.ingest.quota;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ingest.IngestConfig;
import dev.impipe.ingest.quota.UserQuotas.Quota;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Which quotas a request takes from, all or none, and what a refused client is told. The clock is the test's. */
class UserQuotasTest {

  private static final long SECOND = 1_000_000_000L;

  private final AtomicLong now = new AtomicLong(42 * SECOND);

  private UserQuotas quotas(Map<String, String> env) {
    return new UserQuotas(IngestConfig.fromEnv(env).quotas(), now::get);
  }

  @Test
  void theDefaultsLetAPersonChatAndStopAFlood() {
    UserQuotas quotas = quotas(Map.of());
    // A burst of 40 sends at once passes, the 41st is refused for a second
    for (int i = 0; i < 40; i++) {
      assertThat(quotas.take("alice", Quota.SENDS)).isEmpty();
    }
    Refusal refusal = quotas.take("alice", Quota.SENDS).orElseThrow();
    assertThat(refusal.quota()).isEqualTo(Quota.SENDS);
    assertThat(refusal.retryAfterSeconds()).isEqualTo(1);
    assertThat(refusal.reason()).isEqualTo("too many sends: at most 20 per second (bursts of 40) per user; retry in "
        + "1 s");
    // A second later 20 more pass (20 per second)
    now.addAndGet(SECOND);
    for (int i = 0; i < 20; i++) {
      assertThat(quotas.take("alice", Quota.SENDS)).isEmpty();
    }
    assertThat(quotas.take("alice", Quota.SENDS)).isPresent();
  }

  @Test
  void retryAfterIsTheWaitRoundedUpToWholeSeconds() {
    // 720 group creations per day (30 an hour), bursts of 10: one every 120 s
    UserQuotas quotas = quotas(Map.of("IM_QUOTA_GROUPS_PER_DAY", "720", "IM_QUOTA_GROUPS_BURST", "10"));
    for (int i = 0; i < 10; i++) {
      assertThat(quotas.take("alice", Quota.GROUPS)).isEmpty();
    }
    assertThat(quotas.take("alice", Quota.GROUPS).orElseThrow().retryAfterSeconds()).isEqualTo(120);
    // 0.5 s later: 119.5 s to go, said as 120
    now.addAndGet(SECOND / 2);
    Refusal refusal = quotas.take("alice", Quota.GROUPS).orElseThrow();
    assertThat(refusal.retryAfterSeconds()).isEqualTo(120);
    assertThat(refusal.reason())
        .startsWith("too many JOINs of yourself (group creations): at most 720 per day (bursts of 10)");
    // 119 s later: 0.5 s to go, said as 1 (never 0)
    now.addAndGet(119 * SECOND);
    assertThat(quotas.take("alice", Quota.GROUPS).orElseThrow().retryAfterSeconds()).isEqualTo(1);
    now.addAndGet(SECOND / 2);
    assertThat(quotas.take("alice", Quota.GROUPS)).isEmpty();
  }

  @Test
  void aRequestUnderTwoQuotasTakesFromBothOrFromNeither() {
    UserQuotas quotas = quotas(Map.of("IM_QUOTA_SCHEDULES_PER_DAY", "1", "IM_QUOTA_SCHEDULES_BURST", "2",
        "IM_QUOTA_SENDS_BURST", "3"));
    // Given two scheduled messages (each a schedule and a send)
    assertThat(quotas.take("alice", Quota.SCHEDULES, Quota.SENDS)).isEmpty();
    assertThat(quotas.take("alice", Quota.SCHEDULES, Quota.SENDS)).isEmpty();
    // When a third is refused by the schedule quota
    assertThat(quotas.take("alice", Quota.SCHEDULES, Quota.SENDS).orElseThrow().quota())
        .isEqualTo(Quota.SCHEDULES);
    // Then it took no send: one plain send is still left of the burst of 3
    assertThat(quotas.take("alice", Quota.SENDS)).isEmpty();
    assertThat(quotas.take("alice", Quota.SENDS)).isPresent();
  }

  @Test
  void aRefusalByTheSecondQuotaGivesBackTheFirstsToken() {
    UserQuotas quotas = quotas(Map.of("IM_QUOTA_GROUPS_BURST", "5", "IM_QUOTA_MEMBERSHIP_BURST", "1",
        "IM_QUOTA_MEMBERSHIP_PER_MINUTE", "1"));
    // Given alice's one membership request is used up by adding bob
    assertThat(quotas.take("alice", Quota.MEMBERSHIP)).isEmpty();
    // When she tries to create groups: each is refused by MEMBERSHIP
    for (int i = 0; i < 10; i++) {
      assertThat(quotas.take("alice", Quota.GROUPS, Quota.MEMBERSHIP).map(Refusal::quota))
          .hasValue(Quota.MEMBERSHIP);
    }
    // Then the refusals cost no group creations: a minute later she creates one, and four more are left
    now.addAndGet(60 * SECOND);
    assertThat(quotas.take("alice", Quota.GROUPS, Quota.MEMBERSHIP)).isEmpty();
    for (int i = 0; i < 4; i++) {
      assertThat(quotas.take("alice", Quota.GROUPS)).isEmpty();
    }
    assertThat(quotas.take("alice", Quota.GROUPS)).isPresent();
  }

  @Test
  void theDefaultsOfTheSlowQuotas() {
    UserQuotas quotas = quotas(Map.of());
    for (int i = 0; i < 20; i++) {
      assertThat(quotas.take("alice", Quota.GROUPS)).isEmpty();
    }
    // 100 per day: one every 864 s
    Refusal groups = quotas.take("alice", Quota.GROUPS).orElseThrow();
    assertThat(groups.retryAfterSeconds()).isEqualTo(864);
    assertThat(groups.reason()).contains("at most 100 per day (bursts of 20)");
    for (int i = 0; i < 50; i++) {
      assertThat(quotas.take("alice", Quota.SCHEDULES)).isEmpty();
    }
    // 200 per day: one every 432 s
    assertThat(quotas.take("alice", Quota.SCHEDULES).orElseThrow().retryAfterSeconds()).isEqualTo(432);
    for (int i = 0; i < 100; i++) {
      assertThat(quotas.take("alice", Quota.MEMBERSHIP)).isEmpty();
    }
    // 60 per minute: one every second
    assertThat(quotas.take("alice", Quota.MEMBERSHIP).orElseThrow().reason())
        .isEqualTo("too many membership requests: at most 60 per minute (bursts of 100) per user; retry in 1 s");
  }

  @Test
  void eachQuotaAndEachUserIsSeparate() {
    UserQuotas quotas = quotas(Map.of("IM_QUOTA_SENDS_BURST", "1", "IM_QUOTA_MEMBERSHIP_BURST", "1"));
    assertThat(quotas.take("alice", Quota.SENDS)).isEmpty();
    assertThat(quotas.take("alice", Quota.SENDS)).isPresent();
    assertThat(quotas.take("alice", Quota.MEMBERSHIP)).isEmpty();
    assertThat(quotas.take("bob", Quota.SENDS)).isEmpty();
    assertThat(quotas.trackedUsers(Quota.SENDS)).isEqualTo(2);
    assertThat(quotas.trackedUsers(Quota.MEMBERSHIP)).isEqualTo(1);
    assertThat(quotas.trackedUsers(Quota.GROUPS)).isZero();
  }

  @Test
  void zeroTurnsAQuotaOff() {
    UserQuotas quotas = quotas(Map.of("IM_QUOTA_SENDS_PER_SECOND", "0"));
    for (int i = 0; i < 10_000; i++) {
      assertThat(quotas.take("alice", Quota.SENDS)).isEmpty();
    }
    assertThat(quotas.trackedUsers(Quota.SENDS)).isZero();
  }

  @Test
  void theTrackedUsersCapIsASetting() {
    UserQuotas quotas = quotas(Map.of("IM_QUOTA_MAX_TRACKED_USERS", "100"));
    for (int i = 0; i < 1_000; i++) {
      quotas.take("user-" + i, Quota.SENDS);
    }
    assertThat(quotas.trackedUsers(Quota.SENDS)).isEqualTo(100);
    Optional<Refusal> none = quotas.take("user-999", Quota.SENDS);
    assertThat(none).isEmpty();
  }
}
