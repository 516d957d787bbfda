package dev.impipe.fanout.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.impipe.runtime.streams.VersionedValue;
import org.junit.jupiter.api.Test;

class SentCodecTest {

  @Test
  void sentValuesRoundTripWithIdsThatHoldNulBytes() {
    SentCodec.Sent sent = new SentCodec.Sent("al\0ice", "g\0", 42, 'T', 7, 1_700_000_000_000L, "c-\0-1");
    assertThat(SentCodec.decodeSent(SentCodec.sentValue(sent))).isEqualTo(sent);
    assertThat(SentCodec.dedupeMessageId(SentCodec.dedupeValue("m-1"))).isEqualTo("m-1");
  }

  @Test
  void dedupeKeysOfDifferentTriplesNeverCollide() {
    // Joined with a separator, ("a\0b", "c", "d") and ("a", "b\0c", "d") would be the same key
    assertThat(SentCodec.dedupeKey("a\0b", "c", "d")).isNotEqualTo(SentCodec.dedupeKey("a", "b\0c", "d"));
  }

  @Test
  void valuesOfAnUnknownVersionAreRejected() {
    byte[] value = SentCodec.sentValue(new SentCodec.Sent("a", "c", 1, 'W', 2, 3, "x"));
    value[0] = 2;
    assertThatThrownBy(() -> SentCodec.decodeSent(value)).isInstanceOf(VersionedValue.UnknownVersionException.class)
        .hasMessageContaining("fanout-sent value has version 2");
    byte[] joined = MemberKeys.joinedAt(5);
    joined[0] = 9;
    assertThatThrownBy(() -> MemberKeys.joinedAt(joined)).isInstanceOf(VersionedValue.UnknownVersionException.class);
    assertThat(MemberKeys.covers(MemberKeys.period(1, 5), 3)).isTrue();
    assertThat(MemberKeys.covers(MemberKeys.period(1, 5), 5)).isFalse();
  }

  @Test
  void aGroupRangeHoldsExactlyItsMembers() {
    var g1 = MemberKeys.groupPrefix("g1");
    var end = MemberKeys.groupEnd("g1");
    assertThat(MemberKeys.key("g1", "zz\uffff").compareTo(end)).isNegative();
    assertThat(MemberKeys.key("g1", "").compareTo(g1)).isPositive();
    assertThat(MemberKeys.key("g10", "a").compareTo(end)).isPositive();
    assertThat(MemberKeys.key("g1\0", "a").compareTo(end)).isPositive();
    assertThat(MemberKeys.userId(MemberKeys.key("g1", "u\0x"))).isEqualTo("u\0x");
  }
}
