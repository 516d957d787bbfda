package dev.impipe.ingest.quota;

import dev.impipe.edge.quota.Rate;
import dev.impipe.edge.quota.RateQuota;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The per-user quotas of one ingest instance: each request takes one token from each quota it falls under, all or
 * none. Ingest cannot see a group's size, so a group message costs one token like a direct one (its fan-out is
 * bounded by the group's member cap and by large-group read diffusion, not here).
 */
public final class UserQuotas {

  /** What is limited. */
  public enum Quota {
    SENDS("sends"), SCHEDULES("scheduled messages"), MEMBERSHIP("membership requests"), GROUPS("JOINs of "
        + "yourself (group creations)");

    private final String label;

    Quota(String label) {
      this.label = label;
    }

    /** The quota as a user reads it. */
    public String label() {
      return label;
    }
  }

  private final Map<Quota, RateQuota> quotas = new EnumMap<>(Quota.class);
  private final LongSupplier nanoClock;

  /** {@code nanoClock}: a monotonic clock in nanoseconds ({@code System::nanoTime}; a fake one in tests). */
  public UserQuotas(QuotaConfig config, LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    quotas.put(Quota.SENDS, new RateQuota(config.sends(), config.maxTrackedUsers()));
    quotas.put(Quota.SCHEDULES, new RateQuota(config.schedules(), config.maxTrackedUsers()));
    quotas.put(Quota.MEMBERSHIP, new RateQuota(config.membership(), config.maxTrackedUsers()));
    quotas.put(Quota.GROUPS, new RateQuota(config.groups(), config.maxTrackedUsers()));
  }

  /**
   * Takes one token of each of {@code wanted} for {@code user}: empty when all were taken, else the first quota
   * that refused, with nothing taken from any.
   */
  public Optional<Refusal> take(String user, Quota... wanted) {
    long now = nanoClock.getAsLong();
    for (int i = 0; i < wanted.length; i++) {
      RateQuota quota = quotas.get(wanted[i]);
      long waitNanos = quota.tryTake(user, now);
      if (waitNanos > 0) {
        for (int j = 0; j < i; j++) {
          quotas.get(wanted[j]).refund(user);
        }
        return Optional.of(refusal(wanted[i], quota.rate(), waitNanos));
      }
    }
    return Optional.empty();
  }

  /** Users with state in {@code quota} now (a gauge). */
  public int trackedUsers(Quota quota) {
    return quotas.get(quota).trackedUsers();
  }

  private static Refusal refusal(Quota quota, Rate rate, long waitNanos) {
    long seconds = Math.max(1, (waitNanos + 999_999_999L) / 1_000_000_000L);
    return new Refusal(quota, "too many " + quota.label() + ": at most " + rate.text() + " per user; retry in "
        + seconds + " s", seconds);
  }
}
