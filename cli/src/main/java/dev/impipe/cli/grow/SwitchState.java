package dev.impipe.cli.grow;

import dev.impipe.runtime.topics.GenerationControl;
import dev.impipe.runtime.topics.GenerationControl.Switch;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** The control topic of an online switch read up to some point ({@link GenerationControl}): pure fold. */
final class SwitchState {

  private final int target;
  private Optional<Switch> current = Optional.empty();
  private final Set<Integer> fenced = new HashSet<>();

  SwitchState(int target) {
    this.target = target;
  }

  void apply(String key, String value) {
    if (GenerationControl.SWITCH_KEY.equals(key)) {
      Switch.decode(value).ifPresent(s -> current = Optional.of(s));
      return;
    }
    GenerationControl.fencedTask(key, target).ifPresent(fenced::add);
  }

  /** The newest switch record. */
  Optional<Switch> current() {
    return current;
  }

  /** Whether the target generation is live already. */
  boolean live() {
    return current.filter(s -> s.target() >= target && s.phase() == GenerationControl.Phase.LIVE).isPresent();
  }

  /** The fan-out tasks (0 .. tasks-1) that have not written their fence for the target yet. */
  List<Integer> missing(int tasks) {
    List<Integer> out = new ArrayList<>();
    for (int t = 0; t < tasks; t++) {
      if (!fenced.contains(t)) {
        out.add(t);
      }
    }
    return out;
  }

  String describe(int tasks) {
    return current.map(Switch::encode).orElse("none") + ", fan-out tasks fenced "
        + (tasks - missing(tasks).size()) + "/" + tasks;
  }
}
