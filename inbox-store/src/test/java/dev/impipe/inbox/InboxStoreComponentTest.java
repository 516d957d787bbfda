package dev.impipe.inbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.inbox.conversations.ConversationsConfig;
import org.junit.jupiter.api.Test;

class InboxStoreComponentTest {

  @Test
  void itIsTheInboxStoreAppStartedAfterFanOutWithItsTwoSettingTables() {
    InboxStoreComponent component = new InboxStoreComponent();
    assertThat(component.name()).isEqualTo(InboxStoreTopology.APP_NAME);
    assertThat(component.order()).isEqualTo(300);
    assertThat(component.configTables()).containsExactly(InboxStoreConfig.TABLE, ConversationsConfig.TABLE);
  }
}
