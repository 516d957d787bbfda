package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

class VersionedValueTest {

  @Test
  void fieldsReadBackInOrderAfterTheVersionByte() {
    byte[] value = VersionedValue.write(2).int64(-5).int32(7).string("bob\0x").string(null).bytes(new byte[] {1})
        .int8(200).build();
    assertThat(value[0]).isEqualTo((byte) 2);
    VersionedValue.Reader r = VersionedValue.read(value, "test", 1, 2);
    assertThat(r.version()).isEqualTo(2);
    assertThat(r.int64()).isEqualTo(-5);
    assertThat(r.int32()).isEqualTo(7);
    assertThat(r.string()).isEqualTo("bob\0x");
    assertThat(r.string()).isNull();
    assertThat(r.bytes()).containsExactly(1);
    assertThat(r.int8()).isEqualTo(200);
    r.end();
  }

  @Test
  void anUnknownVersionIsRejectedByName() {
    byte[] value = VersionedValue.write(3).int64(1).build();
    assertThatThrownBy(() -> VersionedValue.read(value, "pending", 1))
        .isInstanceOf(VersionedValue.UnknownVersionException.class)
        .hasMessage("pending value has version 3; this build reads versions [1]");
    assertThatThrownBy(() -> VersionedValue.read(new byte[0], "pending", 1))
        .isInstanceOf(VersionedValue.MalformedValueException.class);
  }

  @Test
  void aShortOrLongValueIsMalformed() {
    byte[] value = VersionedValue.write(1).int64(1).build();
    assertThatThrownBy(() -> VersionedValue.read(Arrays.copyOf(value, 5), "x", 1).int64())
        .isInstanceOf(VersionedValue.MalformedValueException.class).hasMessageContaining("ends before");
    VersionedValue.Reader r = VersionedValue.read(Arrays.copyOf(value, 10), "x", 1);
    r.int64();
    assertThatThrownBy(r::end).isInstanceOf(VersionedValue.MalformedValueException.class);
    assertThatThrownBy(() -> VersionedValue.read(VersionedValue.write(1).int32(99).build(), "x", 1).bytes())
        .isInstanceOf(VersionedValue.MalformedValueException.class);
  }

  @Test
  void theLongSerdeCarriesAVersionAndQuarantinesWhatItCannotRead() {
    Serde<Long> serde = VersionedValue.longSerde("count");
    byte[] stored = serde.serializer().serialize("t", 42L);
    assertThat(stored).hasSize(9).startsWith(1);
    assertThat(serde.deserializer().deserialize("t", stored)).isEqualTo(42L);
    Serde<Long> quarantining = StoredValues.quarantining(serde);
    assertThatThrownBy(() -> quarantining.deserializer().deserialize("t", new byte[8]))
        .isInstanceOf(StoredValues.Undecodable.class).hasMessageContaining("count value has version 0");
  }
}
