package dev.impipe.fanout.internal;

import dev.impipe.runtime.topics.GenerationControl.Phase;
import dev.impipe.runtime.topics.GenerationControl.Switch;
import java.util.Optional;

/**
 * Where a fan-out task writes its inbox entries during an online inbox switch (ADR 0014): pure.
 *
 * <p>{@code base} is the generation the fan-out was started with ({@code IM_INBOX_GENERATION}), {@code control} the
 * newest switch record seen ({@code GenerationWatch} catches up before the app starts, then may lag a little),
 * {@code fenced} the generation this task has fenced
 * up to (kept in the task's store, so it survives a restart: a task never writes to a generation below it). A task
 * that fenced generation t-1 holds its entries back until it sees t live, so a user's first entry written to t comes
 * after all of theirs the migration copied.
 */
public final class SwitchRules {

  /** What to do now: fence ({@code fenceTo} > 0: write the fence for that target first), then write or hold. */
  public record Decision(int fenceTo, int writeTo, boolean hold) {}

  private SwitchRules() {}

  public static Decision decide(int base, Optional<Switch> control, int fenced) {
    int liveControl = control.filter(s -> s.phase() == Phase.LIVE).map(Switch::target).orElse(0);
    int pending = control.filter(s -> s.phase() == Phase.FENCE).map(Switch::target).orElse(0);
    int live = Math.max(base, liveControl);
    // A fan-out started with the target generation during the switch fences and holds too: the copy is not done.
    int fenceTo = pending > Math.max(fenced, liveControl) ? pending : 0;
    boolean hold = pending > liveControl || Math.max(fenced, fenceTo) > live;
    return new Decision(fenceTo, live, hold);
  }
}
