package dev.impipe.inbox.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.inbox.query.StoreView;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/** The store view the queries read through: inclusive bounds, either direction, never more than asked for. */
class StoreViewOfTest {

  @Test
  void aRangeReadHoldsAtMostMaxEntriesInKeyOrderOrReversed() {
    MockProcessorContext<Void, Void> ctx = new MockProcessorContext<>();
    KeyValueStore<Bytes, String> store = Stores.keyValueStoreBuilder(CountingStore.supplier("s", new AtomicLong()),
        Serdes.Bytes(), Serdes.String()).withLoggingDisabled().build();
    store.init(ctx.getStateStoreContext(), store);
    for (long seq = 0; seq < 5; seq++) {
      store.put(StoreKeys.entry("bob", seq), "e" + seq);
    }
    StoreView<String> view = StoreView.of(store);
    Bytes from = StoreKeys.entry("bob", 1);
    Bytes to = StoreKeys.entry("bob", 4);
    assertThat(view.range(from, to, false, 2)).extracting(kv -> kv.value).containsExactly("e1", "e2");
    assertThat(view.range(from, to, true, 3)).extracting(kv -> kv.value).containsExactly("e4", "e3", "e2");
    assertThat(view.range(from, to, false, 10)).extracting(kv -> kv.value).containsExactly("e1", "e2", "e3", "e4");
    assertThat(view.range(from, to, false, 0)).isEmpty();
    assertThat(view.get(StoreKeys.entry("bob", 3))).contains("e3");
    assertThat(view.get(StoreKeys.entry("bob", 7))).isEmpty();
    assertThat(view.range(from, from, false, 1)).containsExactly(KeyValue.pair(from, "e1"));
  }
}
