package dev.impipe.ingest.quota;

/**
 * A request over a quota: nothing was taken from any quota.
 *
 * @param quota the quota that refused
 * @param reason what the client is told
 * @param retryAfterSeconds whole seconds until a retry can pass (at least 1), for {@code Retry-After}
 */
public record Refusal(UserQuotas.Quota quota, String reason, long retryAfterSeconds) {}
