package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.utils.Bytes;
import org.junit.jupiter.api.Test;

class HeldValuesTest {

  @Test
  void aSlotLetGoStillReadsItsLastValueForARangeReadThatHoldsIt() {
    HeldValues held = new HeldValues(null);
    HeldValues.Slot slot = held.add(Bytes.wrap(new byte[] {1}), new byte[] {7, 7});
    held.set(slot, new byte[] {8, 8, 8});
    held.remove(Bytes.wrap(new byte[] {1}));
    assertThat(held.bytes(slot)).containsExactly(8, 8, 8);
    assertThat(held.deleted(slot)).isFalse();
  }

  @Test
  void aReaderOnAnotherThreadNeverSeesAMixOfTwoValuesWhileTheyChangeAndMove() throws Exception {
    HeldValues held = new HeldValues(null);
    int keys = 64;
    HeldValues.Slot[] slots = new HeldValues.Slot[keys];
    for (int k = 0; k < keys; k++) {
      slots[k] = held.add(Bytes.wrap(new byte[] {(byte) k}), filled(1, 100));
    }
    AtomicBoolean done = new AtomicBoolean();
    AtomicReference<String> torn = new AtomicReference<>();
    Thread reader = new Thread(() -> {
      while (!done.get() && torn.get() == null) {
        for (HeldValues.Slot s : slots) {
          byte[] b = held.bytes(s);
          for (byte x : b) {
            if (x != b[0]) {
              torn.set(Arrays.toString(b));
            }
          }
        }
      }
    });
    reader.start();
    for (int i = 0; i < 300_000; i++) {
      // Values of growing sizes, so that chunks fill, empty and the arena moves what is live.
      held.set(slots[i % keys], filled(i, 50 + i % 4_000));
    }
    done.set(true);
    reader.join();
    assertThat(torn.get()).as("bytes of one value, all the same").isNull();
    assertThat(held.bytes(slots[0])).isEqualTo(filled(299_968, 50 + 299_968 % 4_000));
  }

  private static byte[] filled(int value, int length) {
    byte[] b = new byte[length];
    Arrays.fill(b, (byte) value);
    return b;
  }
}
