package dev.impipe.ack.wheel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.ack.wheel.DeviceTimers.Run;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The wheel's device and slot stores kept in step, over in-memory stores. */
class TimersTest {

  private final MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
  private final KeyValueStore<Bytes, byte[]> devices = store("devices");
  private final KeyValueStore<Bytes, byte[]> slots = store("slots");
  private final AtomicLong pending = new AtomicLong(-1);

  private KeyValueStore<Bytes, byte[]> store(String name) {
    KeyValueStore<Bytes, byte[]> s = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.Bytes(),
        Serdes.ByteArray()).withLoggingDisabled().build();
    s.init(context.getStateStoreContext(), s);
    return s;
  }

  @AfterEach
  void tearDown() {
    devices.close();
    slots.close();
  }

  private static DeviceTimers inSlot(long slot) {
    return new DeviceTimers(DeviceTimers.NO_ACK, 0, List.of(new Run(1, 1, slot, 0, 0, 0, 1)));
  }

  private static Bytes key(String device) {
    return Bytes.wrap(WheelCodec.device("bob", device));
  }

  @Test
  void thePendingCountStartsFromTheStoredDevices() {
    devices.put(key("phone"), new byte[] {1});
    devices.put(key("laptop"), new byte[] {1});

    new Timers(devices, slots, pending, 100);

    assertThat(pending).hasValue(2);
  }

  @Test
  void theCursorStartsAtTheBeginningAndIsLoweredToASlotEnteredBelowIt() {
    Timers timers = new Timers(devices, slots, pending, 100);
    assertThat(timers.cursor()).isEqualTo(Long.MIN_VALUE);
    timers.cursor(100);

    timers.write("bob", "phone", key("phone"), Set.of(), inSlot(50), 1);
    assertThat(timers.cursor()).isEqualTo(50);
    timers.write("bob", "laptop", key("laptop"), Set.of(), inSlot(70), 1);
    assertThat(timers.cursor()).isEqualTo(50);

    assertThat(slots.approximateNumEntries()).isEqualTo(2);
    assertThat(pending).hasValue(2);
  }

  @Test
  void aDeviceRecordIsFiledUnderExactlyTheSlotsOfItsRunsAndGoesWhenEmpty() {
    Timers timers = new Timers(devices, slots, pending, 100);
    assertThat(timers.decode(timers.raw(key("phone"))).isEmpty()).isTrue();

    timers.write("bob", "phone", key("phone"), Set.of(), inSlot(50), 1);
    assertThat(timers.decode(timers.raw(key("phone"))).runs()).isEqualTo(inSlot(50).runs());
    assertThat(slots.get(Bytes.wrap(WheelCodec.slot(50, "bob", "phone")))).isNotNull();

    // Its run moves to slot 60
    timers.write("bob", "phone", key("phone"), Set.of(50L), inSlot(60), 0);
    assertThat(slots.get(Bytes.wrap(WheelCodec.slot(50, "bob", "phone")))).isNull();
    assertThat(slots.get(Bytes.wrap(WheelCodec.slot(60, "bob", "phone")))).isNotNull();

    // Nothing left: no record, no slot key
    timers.write("bob", "phone", key("phone"), Set.of(60L), DeviceTimers.empty(), -1);
    assertThat(timers.raw(key("phone"))).isNull();
    assertThat(slots.approximateNumEntries()).isZero();
    assertThat(pending).hasValue(0);
  }
}
