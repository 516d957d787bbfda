package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ValueArenaTest {

  @Test
  void valuesChangedAndFreedAtRandomReadBackAsWrittenAndTheChunksStayWithinTwiceWhatIsLive() {
    ValueArena arena = new ValueArena();
    SplittableRandom random = new SplittableRandom(7);
    Map<Integer, byte[]> model = new HashMap<>();
    Map<Integer, Long> where = new HashMap<>();
    long maxAllocated = 0;
    for (int step = 0; step < 200_000; step++) {
      int key = random.nextInt(2_000);
      byte[] old = model.remove(key);
      if (old != null) {
        arena.free(where.remove(key), old.length);
      }
      if (random.nextInt(10) > 0) {
        byte[] value = new byte[1 + random.nextInt(random.nextInt(50) == 0 ? 3 * ValueArena.CHUNK / 2 : 600)];
        random.nextBytes(value);
        model.put(key, value);
        where.put(key, arena.add(value));
      }
      if (arena.fragmented()) {
        where.replaceAll((k, at) -> arena.moveIfOld(at, model.get(k).length));
      }
      maxAllocated = Math.max(maxAllocated, arena.allocated() - 2 * arena.liveBytes());
    }
    model.forEach((k, v) -> assertThat(arena.copy(where.get(k), v.length)).isEqualTo(v));
    assertThat(arena.liveBytes()).isEqualTo(model.values().stream().mapToLong(v -> v.length).sum());
    assertThat(maxAllocated).as("beyond twice the live bytes: a few chunks at most, and one large value's")
        .isLessThanOrEqualTo(6L * ValueArena.CHUNK + 2L * ValueArena.CHUNK);
  }

  @Test
  void aChunkIsDroppedOnceEveryValueInItIsFreedAndItsPlaceReused() {
    ValueArena arena = new ValueArena();
    byte[] half = new byte[ValueArena.CHUNK / 2];
    long a = arena.add(half);
    long b = arena.add(half);
    long c = arena.add(new byte[10]); // a second chunk
    assertThat(arena.allocated()).isEqualTo(2L * ValueArena.CHUNK);
    arena.free(a, half.length);
    assertThat(arena.allocated()).as("half of it still live").isEqualTo(2L * ValueArena.CHUNK);
    arena.free(b, half.length);
    assertThat(arena.allocated()).as("empty: dropped").isEqualTo(ValueArena.CHUNK);
    arena.free(c, 10);
    assertThat(arena.allocated()).as("the current chunk stays").isEqualTo(ValueArena.CHUNK);
    assertThat(arena.liveBytes()).isZero();
  }
}
