package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** Property-style checks with random values: key byte order is the fields' order, and every key reads back. */
class OrderedKeyTest {

  private static final int RUNS = 20_000;
  private final SplittableRandom random = new SplittableRandom(17);

  @Test
  void longsOrderAsNumbers() {
    for (int i = 0; i < RUNS; i++) {
      long a = anyLong();
      long b = i % 7 == 0 ? a : anyLong();
      byte[] ea = OrderedKey.key().int64(a).build();
      assertThat(Integer.signum(OrderedKey.compare(ea, OrderedKey.key().int64(b).build())))
          .as("%d vs %d", a, b).isEqualTo(Integer.signum(Long.compare(a, b)));
      assertThat(OrderedKey.read(OrderedKey.key().int64(a).build()).int64()).isEqualTo(a);
    }
  }

  @Test
  void intsOrderAsNumbers() {
    for (int i = 0; i < RUNS; i++) {
      int a = anyInt();
      int b = anyInt();
      byte[] ea = OrderedKey.key().int32(a).build();
      assertThat(Integer.signum(OrderedKey.compare(ea, OrderedKey.key().int32(b).build())))
          .as("%d vs %d", a, b).isEqualTo(Integer.signum(Integer.compare(a, b)));
      assertThat(OrderedKey.read(OrderedKey.key().int32(a).build()).int32()).isEqualTo(a);
    }
  }

  @Test
  void stringsOrderAsTheirUtf8BytesAndNoneIsAPrefixOfAnother() {
    for (int i = 0; i < RUNS; i++) {
      String a = anyString();
      String b = i % 5 == 0 ? a + anyString() : anyString();
      byte[] ea = OrderedKey.key().string(a).build();
      byte[] eb = OrderedKey.key().string(b).build();
      assertThat(Integer.signum(OrderedKey.compare(ea, eb))).as("%s vs %s", a, b)
          .isEqualTo(Integer.signum(utf8Compare(a, b)));
      assertThat(OrderedKey.read(ea).string()).isEqualTo(a);
      if (!a.equals(b)) {
        assertThat(startsWith(eb, ea)).as("%s is not a key prefix of %s", a, b).isFalse();
      }
    }
  }

  @Test
  void tuplesOrderFieldByFieldAndReadBack() {
    for (int i = 0; i < RUNS; i++) {
      Tuple a = anyTuple();
      Tuple b = i % 3 == 0 ? new Tuple(a.user, i % 2 == 0 ? a.device : anyString(), anyLong(), anyInt()) : anyTuple();
      assertThat(Integer.signum(OrderedKey.compare(a.encode(), b.encode()))).as("%s vs %s", a, b)
          .isEqualTo(Integer.signum(a.compareTo(b)));
      OrderedKey.Reader r = OrderedKey.read(a.encode());
      assertThat(new Tuple(r.string(), r.string(), r.int64(), r.int32())).isEqualTo(a);
      assertThat(r.atEnd()).isTrue();
    }
  }

  @Test
  void aPrefixRangeHoldsExactlyTheKeysStartingWithThePrefix() {
    // Given keys (user, device, seq) of users that are prefixes of each other, with NUL bytes and extreme seqs
    String[] users = {"bob", "bobby", "bo", "bob\0", "bob\0x", "", "\0", "bob\u0001", "b\u00ffb", "bob\uffff"};
    long[] seqs = {Long.MIN_VALUE, -1, 0, 1, Long.MAX_VALUE};
    TreeMap<byte[], String> store = new TreeMap<>(OrderedKey::compare);
    for (String user : users) {
      for (String device : users) {
        for (long seq : seqs) {
          store.put(OrderedKey.key().string(user).string(device).int64(seq).build(), user + "|" + device);
        }
      }
    }
    for (String user : users) {
      // When reading the inclusive range [prefix, prefixEnd(prefix)] of one user
      byte[] prefix = OrderedKey.key().string(user).build();
      byte[] end = OrderedKey.prefixEnd(prefix);
      // Then it holds every key of that user and no other
      assertThat(store.subMap(prefix, true, end, true).values()).as(user)
          .hasSize(users.length * seqs.length).allMatch(v -> v.startsWith(user + "|"));
      for (String device : users) {
        byte[] devicePrefix = OrderedKey.key().string(user).string(device).build();
        assertThat(store.subMap(devicePrefix, true, OrderedKey.prefixEnd(devicePrefix), true).values())
            .containsOnly(user + "|" + device).hasSize(seqs.length);
      }
    }
  }

  @Test
  void longStringsWithManyNulBytesReadBack() {
    String nuls = "\0".repeat(100) + "x\0";
    String text = "\u00e5lice-\ud83d\udcf1-".repeat(20);
    OrderedKey.Reader r = OrderedKey.read(OrderedKey.key().string(nuls).int64(-1).string(text).rest(new byte[] {9})
        .build());
    assertThat(r.string()).isEqualTo(nuls);
    assertThat(r.int64()).isEqualTo(-1);
    assertThat(r.string()).isEqualTo(text);
    assertThat(r.rest()).containsExactly(9);
  }

  @Test
  void prefixEndCarriesOverTrailingFfBytesAndIsNullAboveEverything() {
    assertThat(OrderedKey.prefixEnd(new byte[] {1, 2})).containsExactly(1, 3);
    assertThat(OrderedKey.prefixEnd(new byte[] {1, (byte) 0xFF})).containsExactly(2);
    assertThat(OrderedKey.prefixEnd(new byte[] {(byte) 0xFF, (byte) 0xFF})).isNull();
  }

  @Test
  void aTruncatedKeyIsRejected() {
    byte[] key = OrderedKey.key().string("bob").int64(5).build();
    assertThatThrownBy(() -> OrderedKey.read(Arrays.copyOf(key, 4)).string())
        .isInstanceOf(IllegalArgumentException.class);
    OrderedKey.Reader r = OrderedKey.read(Arrays.copyOf(key, key.length - 1));
    r.string();
    assertThatThrownBy(r::int64).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("int64");
    assertThatThrownBy(() -> OrderedKey.key().string(null)).isInstanceOf(IllegalArgumentException.class);
  }

  private record Tuple(String user, String device, long seq, int attempt) implements Comparable<Tuple> {
    byte[] encode() {
      return OrderedKey.key().string(user).string(device).int64(seq).int32(attempt).build();
    }

    @Override
    public int compareTo(Tuple o) {
      int c = utf8Compare(user, o.user);
      c = c != 0 ? c : utf8Compare(device, o.device);
      c = c != 0 ? c : Long.compare(seq, o.seq);
      return c != 0 ? c : Integer.compare(attempt, o.attempt);
    }
  }

  private Tuple anyTuple() {
    return new Tuple(anyString(), anyString(), anyLong(), anyInt());
  }

  private long anyLong() {
    return switch (random.nextInt(4)) {
      case 0 -> random.nextLong();
      case 1 -> random.nextLong(-1000, 1000);
      case 2 -> random.nextBoolean() ? Long.MIN_VALUE + random.nextInt(3) : Long.MAX_VALUE - random.nextInt(3);
      default -> random.nextLong(0, 1L << 42);
    };
  }

  private int anyInt() {
    return random.nextBoolean() ? random.nextInt() : random.nextInt(-3, 3);
  }

  /** Short strings from a small alphabet with NUL, 0x01, a two-byte and a three-byte character: many near-ties. */
  private String anyString() {
    char[] alphabet = {'\0', '\u0001', 'a', 'b', '\u00ff', '\uffff', '#'};
    StringBuilder sb = new StringBuilder();
    int length = random.nextInt(5);
    for (int i = 0; i < length; i++) {
      sb.append(alphabet[random.nextInt(alphabet.length)]);
    }
    return sb.toString();
  }

  private static int utf8Compare(String a, String b) {
    return Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
  }

  private static boolean startsWith(byte[] key, byte[] prefix) {
    return key.length >= prefix.length && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
  }

  @Test
  void theFirstStringsLengthIsItsEncodingWithTheTerminator() {
    byte[] user = OrderedKey.key().string("a\0b").build();
    assertThat(OrderedKey.firstStringLength(OrderedKey.key().string("a\0b").string("c").build()))
        .isEqualTo(user.length);
    assertThat(OrderedKey.firstStringLength(user)).isEqualTo(user.length);
    assertThat(OrderedKey.firstStringLength(OrderedKey.key().int64(0).build())).isEqualTo(-1);
    assertThat(OrderedKey.firstStringLength(new byte[0])).isEqualTo(-1);
  }
}
