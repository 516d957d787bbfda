package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

/**
 * The slots against a sorted map: tens of thousands of keys held, changed (in place, grown, deleted) and let go at
 * random, through index growth, backward-shift removals and arena compactions; groups and buckets.
 */
class HeldSlotsTest {

  private static final byte[] DELETED = new byte[0];
  private final SplittableRandom random = new SplittableRandom(11);
  private final HeldSlots slots = new HeldSlots();
  private final TreeMap<Bytes, byte[]> model = new TreeMap<>();

  @Test
  void manyKeysChangedAndLetGoAtRandomReadAsTheModel() {
    int indexCapacity = slots.indexCapacity();
    int peak = 0;
    for (int round = 0; round < 6; round++) {
      boolean growing = round % 2 == 0; // fill up, then let most go: the arena fills with dead bytes
      for (int op = 0; op < 60_000; op++) {
        Bytes key = HeldValuesTest.key(random.nextInt(400), random.nextInt(150));
        int choice = random.nextInt(10);
        if (choice < (growing ? 8 : 3)) {
          put(key, value(random.nextInt(10) == 0 ? 600 : 60));
        } else if (choice < (growing ? 9 : 4)) {
          put(key, null);
        } else {
          int s = slots.find(key.get());
          if (s >= 0) {
            slots.remove(s);
          }
          model.remove(key);
        }
        peak = Math.max(peak, model.size());
      }
      check();
    }
    assertThat(peak).as("tens of thousands held at once").isGreaterThan(20_000);
    assertThat(slots.indexCapacity()).as("the index grew").isGreaterThan(indexCapacity);
    assertThat(slots.arena().compactions()).as("dead bytes were reclaimed").isPositive();
    assertThat(model.size()).as("keys held at the end").isGreaterThan(1_000);
    slots.clear();
    assertThat(slots.size()).isZero();
    assertThat(slots.find(model.firstKey().get())).isEqualTo(-1);
  }

  @Test
  void aValueChangedAgainIsWrittenOverTheOldOneWhenItFitsElseTakenAnew() {
    byte[] key = HeldValuesTest.key(1, 1).get();
    int s = slots.insert(key, OrderedKey.firstStringLength(key));
    slots.set(s, new byte[100]);
    int used = slots.arena().used();
    slots.set(s, HeldValuesTest.filled(110, 7));
    assertThat(slots.arena().used()).as("within its room: in place").isEqualTo(used);
    assertThat(slots.value(s)).isEqualTo(HeldValuesTest.filled(110, 7));
    slots.set(s, null);
    assertThat(slots.value(s)).isNull();
    slots.set(s, HeldValuesTest.filled(400, 9));
    assertThat(slots.arena().used()).as("beyond it: taken anew").isGreaterThan(used);
    assertThat(slots.value(s)).isEqualTo(HeldValuesTest.filled(400, 9));
    assertThat(slots.arena().live()).as("the key and the new room").isEqualTo(key.length + 400 + 100 + 8);
  }

  @Test
  void aCompactionAfterMostKeysWentLeavesAnArenaOfAboutTwiceWhatIsLive() {
    for (int i = 0; i < 10_000; i++) {
      put(HeldValuesTest.key(i % 400, i / 400), value(200));
    }
    int full = slots.arena().capacity();
    for (int i = 100; i < 10_000; i++) {
      Bytes key = HeldValuesTest.key(i % 400, i / 400);
      slots.remove(slots.find(key.get()));
      model.remove(key);
    }
    int compactions = slots.arena().compactions();
    for (int i = 0; slots.arena().compactions() == compactions && i < 1_000_000; i++) {
      Bytes key = HeldValuesTest.key(i % 100, 0);
      slots.remove(slots.find(key.get())); // its bytes dead, new ones taken
      put(key, value(200));
    }
    assertThat(slots.arena().compactions()).isGreaterThan(compactions);
    check();
    assertThat(slots.arena().capacity()).isLessThan(full / 4)
        .isLessThanOrEqualTo(Math.max(ByteArena.MIN_CAPACITY, 2 * (slots.arena().live() + 2_000)));
  }

  @Test
  void aGroupReadsItsKeysOnlyAndKeysWithoutAGroupAreInBucketZero() {
    for (int u = 0; u < 50; u++) {
      for (int c = 0; c < 20; c++) {
        byte[] k = HeldValuesTest.key(u, c).get();
        slots.set(slots.insert(k, OrderedKey.firstStringLength(k)), new byte[] {(byte) c});
      }
    }
    byte[] plain = {1, 2, 3};
    int s = slots.insert(plain, 0);
    assertThat(slots.bucket(s)).isZero();
    for (int c = 0; c < 20; c += 3) {
      slots.remove(slots.find(HeldValuesTest.key(7, c).get()));
    }
    byte[] seven = OrderedKey.key().string("u7").build();
    Set<Bytes> read = new HashSet<>();
    for (int g = slots.firstOfGroup(seven, seven.length); g >= 0; g = slots.nextOfGroup(g)) {
      assertThat(read.add(Bytes.wrap(slots.key(g)))).isTrue();
      assertThat(slots.bucket(g)).isEqualTo(HeldValues.groupBucket(Bytes.wrap(seven)));
    }
    assertThat(read).hasSize(13).allMatch(k -> OrderedKey.read(k).string().equals("u7"));
    assertThat(slots.firstOfGroup(plain, 0)).isEqualTo(s);
    byte[] nobody = OrderedKey.key().string("nobody").build();
    assertThat(slots.firstOfGroup(nobody, nobody.length)).isEqualTo(-1);
  }

  private void put(Bytes key, byte[] value) {
    int s = slots.find(key.get());
    if (s < 0) {
      s = slots.insert(key.get(), OrderedKey.firstStringLength(key.get()));
    }
    slots.set(s, value);
    model.put(key, value == null ? DELETED : value);
  }

  /** Every key and value as in the model, each group's keys, buckets, and keys not held not found. */
  private void check() {
    assertThat(slots.size()).isEqualTo(model.size());
    for (Map.Entry<Bytes, byte[]> e : model.entrySet()) {
      int s = slots.find(e.getKey().get());
      assertThat(s).isNotNegative();
      assertThat(slots.key(s)).isEqualTo(e.getKey().get());
      assertThat(slots.value(s)).isEqualTo(e.getValue() == DELETED ? null : e.getValue());
    }
    for (int u = 0; u < 400; u++) {
      byte[] prefix = OrderedKey.key().string("u" + u).build();
      Set<Bytes> group = new HashSet<>();
      for (int s = slots.firstOfGroup(prefix, prefix.length); s >= 0; s = slots.nextOfGroup(s)) {
        assertThat(group.add(Bytes.wrap(slots.key(s)))).as("once").isTrue();
        assertThat(slots.bucket(s)).isEqualTo(HeldValues.groupBucket(Bytes.wrap(prefix)));
      }
      Bytes from = Bytes.wrap(prefix);
      assertThat(group).isEqualTo(model.subMap(from, OrderedKey.prefixEnd(from)).keySet());
    }
    for (int i = 0; i < 1_000; i++) {
      Bytes key = HeldValuesTest.key(400 + i, i);
      assertThat(slots.find(key.get())).isEqualTo(-1);
    }
    int held = 0;
    for (int s = 0; s < slots.slotEnd(); s++) {
      held += slots.held(s) ? 1 : 0;
    }
    assertThat(held).isEqualTo(model.size());
  }

  private byte[] value(int maxLength) {
    byte[] v = new byte[random.nextInt(maxLength + 1)];
    random.nextBytes(v);
    return v;
  }
}
