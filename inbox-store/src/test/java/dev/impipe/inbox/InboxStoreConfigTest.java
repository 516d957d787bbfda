package dev.impipe.inbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.config.InvalidConfigException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InboxStoreConfigTest {

  @Test
  void defaultsKeepTheInboxSevenDaysAndTimelinesForever() {
    InboxStoreConfig cfg = InboxStoreConfig.fromEnv(Map.of());

    assertThat(cfg.inboxRetentionMs()).isEqualTo(Duration.ofDays(7).toMillis());
    assertThat(cfg.inboxExpires()).isTrue();
    assertThat(cfg.maxEntriesPerUser()).isEqualTo(100_000);
    assertThat(cfg.timelineExpires()).isFalse();
    assertThat(cfg.retentionIntervalMs()).isEqualTo(60_000);
    assertThat(cfg.queryTimeoutMs()).isEqualTo(3_000);
    assertThat(cfg.cursorRetentionMs()).as("as the inbox").isEqualTo(Duration.ofDays(7).toMillis());
    assertThat(cfg.cursorsExpire()).isTrue();
  }

  @Test
  void cursorsFollowTheInboxRetentionUnlessSetThemselves() {
    assertThat(InboxStoreConfig.fromEnv(Map.of("IM_INBOX_RETENTION", "30d")).cursorRetentionMs())
        .isEqualTo(Duration.ofDays(30).toMillis());
    assertThat(InboxStoreConfig.fromEnv(Map.of("IM_INBOX_RETENTION", "forever")).cursorsExpire()).isFalse();
    assertThat(InboxStoreConfig.fromEnv(Map.of("IM_DEVICE_CURSOR_RETENTION", "forever")).cursorsExpire()).isFalse();
  }

  @Test
  void everySettingIsReadFromItsVariable() {
    InboxStoreConfig cfg = InboxStoreConfig.fromEnv(Map.of(
        "IM_INBOX_RETENTION", "30d", "IM_INBOX_MAX_PER_USER", "5000", "IM_TIMELINE_RETENTION", "365d",
        "IM_INBOX_RETENTION_INTERVAL", "15s", "IM_INBOX_QUERY_TIMEOUT", "500ms", "IM_DEVICE_CURSOR_RETENTION", "14d",
        "IM_SYNC_MAX_WAITING_PER_USER", "2", "IM_SYNC_MAX_RESPONSE_BYTES", "65536"));

    assertThat(cfg).isEqualTo(new InboxStoreConfig(Duration.ofDays(30).toMillis(), 5000,
        Duration.ofDays(365).toMillis(), 15_000, 500, Duration.ofDays(14).toMillis(), 2, 65_536));
  }

  @Test
  void foreverDisablesRetention() {
    InboxStoreConfig cfg = InboxStoreConfig.fromEnv(Map.of("IM_INBOX_RETENTION", "forever",
        "IM_TIMELINE_RETENTION", "-1"));

    assertThat(cfg.inboxExpires()).isFalse();
    assertThat(cfg.timelineExpires()).isFalse();
  }

  @Test
  void invalidValuesNameTheVariable() {
    assertThatThrownBy(() -> InboxStoreConfig.fromEnv(Map.of("IM_INBOX_RETENTION", "a week")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_INBOX_RETENTION");
    assertThatThrownBy(() -> InboxStoreConfig.fromEnv(Map.of("IM_INBOX_MAX_PER_USER", "-3")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_INBOX_MAX_PER_USER");
    assertThatThrownBy(() -> InboxStoreConfig.fromEnv(Map.of("IM_INBOX_RETENTION_INTERVAL", "0")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_INBOX_RETENTION_INTERVAL");
    assertThatThrownBy(() -> InboxStoreConfig.fromEnv(Map.of("IM_DEVICE_CURSOR_RETENTION", "0")))
        .isInstanceOf(InvalidConfigException.class).hasMessageContaining("IM_DEVICE_CURSOR_RETENTION");
  }
}
