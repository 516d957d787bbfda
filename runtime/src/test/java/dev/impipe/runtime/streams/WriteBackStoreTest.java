package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
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

    assertThat(store.pending()).isEqualTo(1);
    store.flushCache();
    assertThat(text(below.get(key("k1")))).isEqualTo("b");
    assertThat(store.pending()).isZero();
    assertThat(store.held()).as("kept until the next write-back, for range reads that began before").isEqualTo(1);

    store.flushCache();
    assertThat(store.held()).as("not changed since it was written below: let go").isZero();
    assertThat(store.value(key("k1"))).as("now read from below").isEqualTo("b");
  }

  @Test
  void theStoreCommitAfterTheCacheFlushKeepsWhatWasJustWrittenBelowInMemory() {
    store.write(key("k"), "a");
    store.flushCache();
    store.commit(Map.of());
    assertThat(store.held()).as("a range read that began before the write below finds it here").isEqualTo(1);
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
    assertThat(store.pending()).isEqualTo(1);
  }

  @Test
  void aKeyWrittenBelowIsLetGoAtTheNextCommitUnlessChangedAgain() {
    store.writeBackEveryCommit(false);
    store.write(key("busy"), "a");
    store.write(key("quiet"), "q");
    store.arm();
    store.flushCache();
    assertThat(store.held()).as("held for one commit after the write below").isEqualTo(2);

    store.write(key("busy"), "b");
    assertThat(store.pending()).as("changed in place, counted once").isEqualTo(1);
    store.flushCache();
    assertThat(store.held()).as("an unarmed commit lets the unchanged one go, keeps the changed one").isEqualTo(1);
    assertThat(store.value(key("quiet"))).as("now read from below").isEqualTo("q");
    assertThat(text(store.get(key("busy")))).isEqualTo("b");
    assertThat(text(below.get(key("busy")))).as("not armed: not written yet").isEqualTo("a");

    store.flushCache();
    store.flushCache();
    assertThat(store.held()).as("a pending change is held until it is written").isEqualTo(1);
    store.arm();
    store.flushCache();
    assertThat(text(below.get(key("busy")))).isEqualTo("b");
    store.flushCache();
    assertThat(store.held()).isZero();
  }

  @Test
  void aKeyChangedAgainAfterItWasWrittenBelowIsWrittenAtTheNextCommit() {
    store.write(key("k"), "a");
    store.flushCache();
    store.write(key("k"), "b");
    store.flushCache();
    assertThat(text(below.get(key("k")))).isEqualTo("b");
    store.flushCache();
    assertThat(store.held()).isZero();
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
    assertThat(store.held()).isZero();
    store.flushCache();
    assertThat(text(below.get(key("k")))).isEqualTo("z");
  }

  @Test
  void aKeyNotHeldIsReadFromTheBottomStoreUnlessAByteLevelWriteWaitsInALayerBetween() {
    Cache cache = new Cache(below);
    WriteBackStore<String> layered = new WriteBackStore<>(cache, TEXT);
    layered.init(new MockProcessorContext<>().getStateStoreContext(), layered);
    below.put(key("k"), bytes("a"));
    cache.waiting.put(key("k"), bytes("stale"));
    assertThat(layered.value(key("k"))).as("past the layers: the bottom store").isEqualTo("a");
    cache.waiting.clear();

    layered.put(key("k"), bytes("b"));
    assertThat(below.get(key("k"))).isNotNull().isEqualTo(bytes("a"));
    assertThat(layered.value(key("k"))).as("written through the layer, not flushed yet").isEqualTo("b");
    layered.flushCache();
    cache.waiting.put(key("k"), bytes("stale"));
    assertThat(layered.value(key("k"))).as("flushed: the bottom store again").isEqualTo("b");
  }

  /** A layer between that keeps writes until its flush, as Kafka Streams' record cache does. */
  private static final class Cache extends WrappedStateStore<KeyValueStore<Bytes, byte[]>, Bytes, byte[]>
      implements
        KeyValueStore<Bytes, byte[]> {
    final Map<Bytes, byte[]> waiting = new HashMap<>();

    Cache(KeyValueStore<Bytes, byte[]> below) {
      super(below);
    }

    @Override
    public byte[] get(Bytes key) {
      return waiting.containsKey(key) ? waiting.get(key) : wrapped().get(key);
    }

    @Override
    public void put(Bytes key, byte[] value) {
      waiting.put(key, value);
    }

    @Override
    public void flushCache() {
      waiting.forEach(wrapped()::put);
      waiting.clear();
    }

    @Override
    public byte[] putIfAbsent(Bytes key, byte[] value) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
      throw new UnsupportedOperationException();
    }

    @Override
    public byte[] delete(Bytes key) {
      throw new UnsupportedOperationException();
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
      throw new UnsupportedOperationException();
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
      throw new UnsupportedOperationException();
    }

    @Override
    public long approximateNumEntries() {
      return wrapped().approximateNumEntries();
    }
  }

  @Test
  void aCloseWithoutACommitDropsTheChanges() {
    store.write(key("k"), "a");
    store.close();
    assertThat(store.pending()).isZero();
    assertThat(store.held()).isZero();
  }

  @Test
  void keysGroupedByTheirFirstStringReadAlikeWithinAndAcrossGroups() {
    KeyValueStore<Bytes, byte[]> under = Stores.inMemoryKeyValueStore("grouped").get();
    WriteBackStore<String> grouped = new WriteBackStore<>(under, TEXT, true);
    under.put(userKey("bob", "c1"), bytes("a"));
    under.put(userKey("bob", "c3"), bytes("c"));
    under.put(userKey("bobby", "c0"), bytes("z"));
    grouped.write(userKey("bob", "c2"), "B");
    grouped.write(userKey("bob", "c3"), "C");
    grouped.write(userKey("al", "c9"), "X");
    grouped.write(userKey("bobby", "c0"), null);
    Bytes bob = OrderedKey.key().string("bob").bytes();

    assertThat(readUsers(grouped.range(bob, OrderedKey.prefixEnd(bob)))).as("one user's, from their group")
        .containsExactly("bob/c1=a", "bob/c2=B", "bob/c3=C");
    assertThat(readUsers(grouped.reverseRange(bob, OrderedKey.prefixEnd(bob))))
        .containsExactly("bob/c3=C", "bob/c2=B", "bob/c1=a");
    assertThat(readUsers(grouped.range(userKey("bob", "c2"), OrderedKey.prefixEnd(bob)))).as("from a key within")
        .containsExactly("bob/c2=B", "bob/c3=C");
    assertThat(readUsers(grouped.range(OrderedKey.key().string("al").bytes(), OrderedKey.prefixEnd(bob))))
        .as("across users").containsExactly("al/c9=X", "bob/c1=a", "bob/c2=B", "bob/c3=C");
    assertThat(readUsers(grouped.all())).containsExactly("al/c9=X", "bob/c1=a", "bob/c2=B", "bob/c3=C");
    assertThat(readUsers(grouped.prefixScan("bob", (topic, p) -> OrderedKey.key().string(p).build())))
        .containsExactly("bob/c1=a", "bob/c2=B", "bob/c3=C");

    grouped.flushCache();
    grouped.flushCache();
    assertThat(grouped.held()).isZero();
    assertThat(readUsers(grouped.all())).as("the same from below")
        .containsExactly("al/c9=X", "bob/c1=a", "bob/c2=B", "bob/c3=C");
    grouped.write(userKey("bob", "c1"), "A");
    assertThat(readUsers(grouped.range(bob, OrderedKey.prefixEnd(bob))))
        .containsExactly("bob/c1=A", "bob/c2=B", "bob/c3=C");
  }

  @Test
  void anArmedBucketWritesOnlyItsUsersChangesAndLetsGoOnlyItsUnchangedOnes() {
    KeyValueStore<Bytes, byte[]> under = Stores.inMemoryKeyValueStore("buckets").get();
    WriteBackStore<String> grouped = new WriteBackStore<>(under, TEXT, true);
    grouped.writeBackEveryCommit(false);
    String other = "u1";
    int bucket = WriteBackStore.groupBucket(OrderedKey.key().string("u0").bytes());
    while (WriteBackStore.groupBucket(OrderedKey.key().string(other).bytes()) == bucket) {
      other = other + "x";
    }
    List<Long> written = new ArrayList<>();
    grouped.onWriteBack(written::add);
    grouped.write(userKey("u0", "c"), "a");
    grouped.write(userKey(other, "c"), "b");

    grouped.arm(bucket);
    grouped.flushCache();
    assertThat(written).containsExactly(1L << bucket);
    assertThat(text(under.get(userKey("u0", "c")))).isEqualTo("a");
    assertThat(under.get(userKey(other, "c"))).as("another bucket: still waiting").isNull();
    assertThat(grouped.pending()).isEqualTo(1);

    grouped.flushCache();
    assertThat(grouped.held()).as("u0's unchanged state let go at the next commit").isEqualTo(1);
    assertThat(text(grouped.get(userKey(other, "c")))).isEqualTo("b");

    grouped.arm();
    grouped.flushCache();
    assertThat(written).last().isEqualTo(WriteBackStore.ALL);
    assertThat(text(under.get(userKey(other, "c")))).isEqualTo("b");
    assertThat(grouped.pending()).isZero();
  }

  private static Bytes userKey(String user, String conversation) {
    return OrderedKey.key().string(user).string(conversation).bytes();
  }

  private static List<String> readUsers(KeyValueIterator<Bytes, byte[]> it) {
    List<String> out = new ArrayList<>();
    try (it) {
      while (it.hasNext()) {
        KeyValue<Bytes, byte[]> kv = it.next();
        OrderedKey.Reader r = OrderedKey.read(kv.key);
        out.add(r.string() + "/" + r.string() + "=" + text(kv.value));
      }
    }
    return out;
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
