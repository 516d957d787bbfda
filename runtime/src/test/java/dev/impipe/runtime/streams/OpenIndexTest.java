package dev.impipe.runtime.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The index against a map, with hashes chosen to collide: probes that run on and wrap, and backward shifts. */
class OpenIndexTest {

  /** Ids are the keys' numbers; the hash is what the test says. */
  private static final class Ints extends OpenIndex {
    @Override
    boolean matches(int id, byte[] key, int from, int to) {
      return to - from == 4 && ByteBuffer.wrap(key, from, 4).getInt() == id;
    }

    int find(int hash, int id) {
      return find(hash, bytes(id), 0, 4);
    }
  }

  private final Ints index = new Ints();

  @Test
  void aRemovalInAProbeThatWrapsAroundMovesTheLaterEntriesBack() {
    int mask = index.capacity() - 1;
    List<Integer> last = hashesHome(mask, mask, 4); // the last position, then on from the first
    List<Integer> first = hashesHome(0, mask, 2);
    for (int i = 0; i < 4; i++) {
      index.add(last.get(i), i);
    }
    index.add(first.get(0), 10);
    index.add(first.get(1), 11);

    index.remove(last.get(1), 1);
    index.remove(last.get(0), 0);
    assertThat(index.find(last.get(2), 2)).isEqualTo(2);
    assertThat(index.find(last.get(3), 3)).isEqualTo(3);
    assertThat(index.find(first.get(0), 10)).isEqualTo(10);
    assertThat(index.find(first.get(1), 11)).isEqualTo(11);
    assertThat(index.find(last.get(0), 0)).isEqualTo(-1);
    assertThat(index.find(last.get(1), 1)).isEqualTo(-1);
    assertThat(index.size()).isEqualTo(4);
    assertThat(index.capacity()).as("still the first table").isEqualTo(mask + 1);
  }

  @Test
  void manyIdsComeAndGoWithFewHashes() {
    SplittableRandom random = new SplittableRandom(5);
    Map<Integer, Integer> model = new HashMap<>(); // id -> hash
    for (int op = 0; op < 200_000; op++) {
      int id = random.nextInt(5_000);
      Integer hash = model.get(id);
      if (hash == null) {
        int h = random.nextInt(64); // many ids share each hash: long runs of equal homes
        index.add(h, id);
        model.put(id, h);
      } else if (random.nextInt(3) > 0) {
        index.remove(hash, id);
        model.remove(id);
      }
      if (op % 20_000 == 0 || op == 199_999) {
        assertThat(index.size()).isEqualTo(model.size());
        for (int i = 0; i < 5_000; i++) {
          Integer h = model.get(i);
          assertThat(index.find(h == null ? i % 64 : h, i)).as("id %d", i).isEqualTo(h == null ? -1 : i);
        }
      }
    }
    assertThat(index.capacity()).as("grown").isGreaterThanOrEqualTo(2 * model.size());
    index.clear();
    assertThat(index.size()).isZero();
  }

  private static List<Integer> hashesHome(int home, int mask, int count) {
    List<Integer> out = new ArrayList<>();
    for (int h = 0; out.size() < count; h++) {
      if (OpenIndex.home(h, mask) == home) {
        out.add(h);
      }
    }
    return out;
  }

  private static byte[] bytes(int id) {
    return ByteBuffer.allocate(4).putInt(id).array();
  }
}
