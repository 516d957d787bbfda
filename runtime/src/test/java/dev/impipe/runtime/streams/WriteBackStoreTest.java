package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

class WriteBackStoreTest {

  private static final WriteBackStore.Codec<String> TEXT = new WriteBackStore.Codec<>(
      s -> s.getBytes(StandardCharsets.UTF_8), b -> new String(b, StandardCharsets.UTF_8));

  private final KeyValueStore<Bytes, byte[]> below = Stores.inMemoryKeyValueStore("below").get();
  private final WriteBackStore<String> store = new WriteBackStore<>(below, TEXT);

  @Test
  void aChangeIsReadBackAtOnceAndWrittenBelowAtTheCommit() {
    store.write(key("k1"), "a");
    store.write(key("k1"), "b");

    assertThat(store.value(key("k1"))).isEqualTo("b");
    assertThat(text(store.get(key("k1")))).isEqualTo("b");
    assertThat(below.get(key("k1"))).isNull();

    store.flushCache();
    assertThat(text(below.get(key("k1")))).isEqualTo("b");
    assertThat(store.pending()).as("kept until the next commit, for range reads that began before").isEqualTo(1);

    store.flushCache();
    assertThat(store.pending()).isZero();
    assertThat(store.value(key("k1"))).as("now read from below").isEqualTo("b");
  }

  @Test
  void theStoreCommitAfterTheCacheFlushKeepsWhatWasJustWrittenBelowInMemory() {
    store.write(key("k"), "a");
    store.flushCache();
    store.commit(Map.of());
    assertThat(store.pending()).as("a range read that began before the write below finds it here").isEqualTo(1);
  }

  @Test
  void anUnarmedStoreWritesBelowOnlyAtTheCommitAfterItIsArmed() {
    store.writeBackEveryCommit(false);
    store.write(key("k"), "a");
    store.flushCache();
    assertThat(below.get(key("k"))).isNull();
    store.arm();
    store.flushCache();
    assertThat(text(below.get(key("k")))).isEqualTo("a");
    store.write(key("k"), "b");
    store.flushCache();
    assertThat(text(below.get(key("k")))).as("disarmed again").isEqualTo("a");
  }

  @Test
  void aKeyChangedAgainAfterItWasWrittenBelowIsWrittenAtTheNextCommit() {
    store.write(key("k"), "a");
    store.flushCache();
    store.write(key("k"), "b");
    store.flushCache();
    assertThat(text(below.get(key("k")))).isEqualTo("b");
    store.flushCache();
    assertThat(store.pending()).isZero();
    assertThat(store.value(key("k"))).isEqualTo("b");
  }

  @Test
  void aDeletionHidesTheKeyAndIsAppliedBelowAtTheCommit() {
    below.put(key("k"), bytes("old"));
    store.write(key("k"), null);
    assertThat(store.value(key("k"))).isNull();
    assertThat(store.get(key("k"))).isNull();
    assertThat(below.get(key("k"))).isNotNull();
    store.flushCache();
    assertThat(below.get(key("k"))).isNull();
  }

  @Test
  void rangesMergeTheChangesOverTheStoreBelowInKeyOrder() {
    below.put(key("k1"), bytes("a"));
    below.put(key("k3"), bytes("c"));
    below.put(key("k5"), bytes("e"));
    store.write(key("k2"), "B");
    store.write(key("k3"), "C");
    store.write(key("k5"), null);
    store.write(key("x9"), "X");

    assertThat(read(store.range(key("k1"), key("k5")))).containsExactly("k1=a", "k2=B", "k3=C");
    assertThat(read(store.reverseRange(key("k1"), key("k5")))).containsExactly("k3=C", "k2=B", "k1=a");
    assertThat(read(store.range(key("k2"), null))).containsExactly("k2=B", "k3=C", "x9=X");
    assertThat(read(store.all())).containsExactly("k1=a", "k2=B", "k3=C", "x9=X");
    assertThat(read(store.reverseAll())).containsExactly("x9=X", "k3=C", "k2=B", "k1=a");
    assertThat(read(store.prefixScan("k", Serdes.String().serializer()))).containsExactly("k1=a", "k2=B", "k3=C");

    store.flushCache();
    assertThat(read(store.all())).as("the same once written below").containsExactly("k1=a", "k2=B", "k3=C", "x9=X");
    store.flushCache();
    assertThat(read(below.all())).containsExactly("k1=a", "k2=B", "k3=C", "x9=X");
  }

  @Test
  void aByteLevelWriteReplacesAPendingChange() {
    store.write(key("k"), "a");
    store.put(key("k"), bytes("z"));
    assertThat(store.value(key("k"))).isEqualTo("z");
    assertThat(store.pending()).isZero();
    store.flushCache();
    assertThat(text(below.get(key("k")))).isEqualTo("z");
  }

  @Test
  void aCloseWithoutACommitDropsTheChanges() {
    store.write(key("k"), "a");
    store.close();
    assertThat(store.pending()).isZero();
  }

  private static Bytes key(String k) {
    return Bytes.wrap(bytes(k));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String text(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  private static List<String> read(KeyValueIterator<Bytes, byte[]> it) {
    List<String> out = new ArrayList<>();
    try (it) {
      while (it.hasNext()) {
        KeyValue<Bytes, byte[]> kv = it.next();
        out.add(text(kv.key.get()) + "=" + text(kv.value));
      }
    }
    return out;
  }
}
