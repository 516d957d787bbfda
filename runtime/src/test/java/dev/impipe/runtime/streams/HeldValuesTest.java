package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.junit.jupiter.api.Test;

/** Range reads by group, write-backs by bucket, and a query thread reading while the stream thread writes. */
class HeldValuesTest {

  private final SplittableRandom random = new SplittableRandom(23);
  private final HeldValues held = new HeldValues(OrderedKey::firstStringLength);

  @Test
  void rangesWithinAGroupAndAcrossGroupsReadAsTheModel() {
    TreeMap<Bytes, byte[]> model = new TreeMap<>();
    for (int i = 0; i < 20_000; i++) {
      Bytes key = key(random.nextInt(200), random.nextInt(100));
      byte[] value = random.nextInt(20) == 0 ? null : filled(1 + random.nextInt(50), i);
      held.write(key, value);
      model.put(key, value);
      if (i % 7 == 0) {
        Bytes gone = key(random.nextInt(200), random.nextInt(100));
        held.remove(gone);
        model.remove(gone);
      }
    }
    for (int u = 0; u < 200; u += 9) {
      Bytes user = OrderedKey.key().string("u" + u).bytes();
      Bytes end = OrderedKey.prefixEnd(user);
      assertThat(read(held.range(user, end, true))).isEqualTo(wrapped(model.subMap(user, true, end, true)));
      Bytes within = key(u, 50);
      assertThat(read(held.range(within, end, false))).isEqualTo(wrapped(model.subMap(within, true, end, false)));
      Bytes next = OrderedKey.key().string("u" + u + "0").bytes();
      assertThat(read(held.range(user, next, true))).as("across groups")
          .isEqualTo(wrapped(model.subMap(user, true, next, true)));
    }
    assertThat(read(held.range(null, null, true))).isEqualTo(wrapped(model));
    Bytes nobody = OrderedKey.key().string("nobody").bytes();
    assertThat(held.range(nobody, OrderedKey.prefixEnd(nobody), true)).isEmpty();
  }

  @Test
  void aWriteBackWritesTheChangedKeysOfItsBucketsAndLetsThemGoAtTheNext() {
    Map<Bytes, byte[]> written = new HashMap<>();
    List<Bytes> keys = new ArrayList<>();
    for (int u = 0; u < 100; u++) {
      for (int c = 0; c < 5; c++) {
        keys.add(key(u, c));
        held.write(key(u, c), c == 0 ? null : filled(c, u));
      }
    }
    int bucket = HeldValues.groupBucket(OrderedKey.key().string("u3").bytes());
    held.writeBack(1L << bucket, written::put);
    assertThat(written).isNotEmpty();
    for (Bytes k : keys) {
      boolean inBucket =
          HeldValues.groupBucket(Bytes.wrap(Arrays.copyOf(k.get(), OrderedKey.firstStringLength(k.get())))) == bucket;
      assertThat(written.containsKey(k)).as("%s", k).isEqualTo(inBucket);
    }
    assertThat(written.get(key(3, 0))).as("a deletion").isNull();
    assertThat(written.get(key(3, 2))).isEqualTo(filled(2, 3));
    assertThat(held.pending()).isEqualTo(500 - written.size());

    held.write(key(3, 1), filled(9, 9)); // changed again: stays
    held.letGoWritten();
    assertThat(held.size()).isEqualTo(500 - written.size() + 1);
    assertThat(held.get(key(3, 2))).as("let go").isSameAs(HeldValues.NOT_HELD);
    assertThat(held.get(key(3, 1))).isEqualTo(filled(9, 9));

    written.clear();
    int stillHeld = held.size();
    held.writeBack(WriteBackStore.ALL, written::put);
    assertThat(written).as("every change left").hasSize(stillHeld).containsKey(key(3, 1));
    assertThat(held.pending()).isZero();
    held.letGoWritten();
    assertThat(held.size()).isZero();
  }

  @Test
  void aQueryThreadReadingWhileTheStreamThreadWritesSeesWholeValues() throws InterruptedException {
    AtomicBoolean done = new AtomicBoolean();
    AtomicReference<String> torn = new AtomicReference<>();
    AtomicLong reads = new AtomicLong();
    CountDownLatch started = new CountDownLatch(1);
    Thread reader = new Thread(() -> {
      SplittableRandom r = new SplittableRandom(3);
      started.countDown();
      while (!done.get() && torn.get() == null) {
        int u = r.nextInt(50);
        byte[] v = held.get(key(u, r.nextInt(40)));
        if (v != HeldValues.NOT_HELD && v != null && !uniform(v)) {
          torn.set("get: " + show(v));
        }
        Bytes user = OrderedKey.key().string("u" + u).bytes();
        for (KeyValue<Bytes, byte[]> kv : held.range(user, OrderedKey.prefixEnd(user), true)) {
          if (kv.value != null && !uniform(kv.value)) {
            torn.set("range: " + show(kv.value));
          }
        }
        reads.incrementAndGet();
      }
    }, "query");
    reader.start();
    assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
    int compactions = held.slots().arena().compactions();
    for (int i = 0; (i < 200_000 || reads.get() < 1_000) && i < 3_000_000 && torn.get() == null; i++) {
      Bytes key = key(random.nextInt(50), random.nextInt(40));
      int op = random.nextInt(20);
      if (op == 0) {
        held.remove(key);
      } else {
        held.write(key, op == 1 ? null : filled(1 + random.nextInt(op < 4 ? 2_000 : 100), i));
      }
      if (i % 5_000 == 0) {
        held.letGoWritten();
        held.writeBack(-1L, (k, v) -> {});
      }
    }
    done.set(true);
    reader.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(reader.isAlive()).isFalse();
    assertThat(torn.get()).isNull();
    assertThat(reads.get()).isGreaterThanOrEqualTo(1_000);
    assertThat(held.slots().arena().compactions()).as("moved while read").isGreaterThan(compactions);
  }

  private static Map<Bytes, Bytes> wrapped(Map<Bytes, byte[]> model) {
    Map<Bytes, Bytes> out = new TreeMap<>();
    model.forEach((k, v) -> out.put(k, v == null ? null : Bytes.wrap(v)));
    return out;
  }

  private static String show(byte[] v) {
    return v.length + " bytes, from " + v[0] + " to " + v[v.length - 1];
  }

  private static boolean uniform(byte[] v) {
    for (byte b : v) {
      if (b != v[0]) {
        return false;
      }
    }
    return v.length > 0;
  }

  /** The range as a map, its values wrapped (compared by content). */
  private static Map<Bytes, Bytes> read(List<KeyValue<Bytes, byte[]>> range) {
    Map<Bytes, Bytes> out = new TreeMap<>();
    Bytes last = null;
    for (KeyValue<Bytes, byte[]> kv : range) {
      assertThat(last == null || last.compareTo(kv.key) < 0).as("in key order").isTrue();
      last = kv.key;
      out.put(kv.key, kv.value == null ? null : Bytes.wrap(kv.value));
    }
    return out;
  }

  static byte[] filled(int length, int b) {
    byte[] v = new byte[length];
    Arrays.fill(v, (byte) b);
    return v;
  }

  /** A user's conversation key, grouped by the user. */
  static Bytes key(int user, int conversation) {
    return OrderedKey.key().string("u" + user).string("c" + conversation).bytes();
  }
}
