package dev.impipe.notify.provider;

import dev.impipe.avro.Notification;
import java.util.concurrent.CompletableFuture;

/**
 * One notification channel (Web Push, FCM, APNs, webhook): turns a decided {@link Notification} into the provider's
 * request and its answer into a {@link SendOutcome}. Implementations never throw from {@link #send}: every failure,
 * a network error included, completes the future with an outcome, and the sender decides what follows (retry,
 * removal, the rejected topic). The {@code notificationId} is the provider's collapse / idempotency key, so a
 * notification sent twice (at-least-once sending) shows once.
 */
public interface Provider extends AutoCloseable {

  /** The {@code provider} value of the registrations it serves: {@code WEBPUSH}, {@code FCM}, {@code APNS}, ... */
  String name();

  /**
   * Sends {@code notification} with {@code payload} (the JSON the device gets, {@link NotificationPayload}).
   *
   * @return the outcome; completes exceptionally never
   */
  CompletableFuture<SendOutcome> send(Notification notification, byte[] payload);

  @Override
  default void close() {}
}
