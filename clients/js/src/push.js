// Notifications in a browser (DESIGN "Notifications"): a service worker, the user's permission, a Web Push
// subscription to the server's VAPID key, and that subscription registered for this device. The server notifies a
// registered device about messages it did not receive in time; the service worker shows them.
//
// Permission is asked first, before any network round trip, because browsers only prompt from a user gesture
// (a click handler) and some count a gesture as spent after a few seconds.

/** Why notifications could not be turned on: `reason` is `unsupported`, `denied`, `dismissed` or `unavailable`. */
export class NotificationError extends Error {
  /**
   * @param {'unsupported'|'denied'|'dismissed'|'unavailable'} reason
   * @param {string} message
   */
  constructor(reason, message) {
    super(message);
    this.name = 'NotificationError';
    this.reason = reason;
  }
}

/** True where a page can receive Web Push: a service worker, the Push API and notifications. */
export function notificationsSupported(env = globalThis) {
  return Boolean(env.navigator && 'serviceWorker' in env.navigator && 'PushManager' in env && 'Notification' in env);
}

/** base64url (padded or not) to bytes: the form PushManager.subscribe wants the VAPID key in. */
export function base64UrlToBytes(text) {
  const bare = text.replace(/=+$/, '');
  if (/[^A-Za-z0-9_-]/.test(bare) || bare.length % 4 === 1) {
    throw new TypeError('not base64url: ' + text);
  }
  const b64 = bare.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function sameBytes(a, b) {
  if (!a || !b) {
    return false;
  }
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** Resolves once the registration has an active worker (PushManager.subscribe needs one). */
function activated(registration) {
  if (registration.active) {
    return Promise.resolve(registration);
  }
  const worker = registration.installing ?? registration.waiting;
  if (!worker) {
    return Promise.reject(new NotificationError('unsupported', 'the service worker did not install'));
  }
  return new Promise((resolve, reject) => {
    const check = () => {
      if (worker.state === 'activated') {
        resolve(registration);
      } else if (worker.state === 'redundant') {
        reject(new NotificationError('unsupported', 'the service worker failed to install'));
      }
    };
    worker.addEventListener('statechange', check);
    check();
  });
}

async function permission(env) {
  const N = env.Notification;
  if (N.permission === 'granted') {
    return;
  }
  const answer = N.permission === 'denied' ? 'denied' : await N.requestPermission();
  if (answer === 'denied') {
    throw new NotificationError('denied', 'notifications are blocked for this site (allow them in the site settings)');
  }
  if (answer !== 'granted') {
    throw new NotificationError('dismissed', 'notifications were not allowed (the prompt was dismissed)');
  }
}

/**
 * Turns notifications on for the client's device: registers the service worker at `serviceWorkerUrl`, asks the
 * user's permission, subscribes to Web Push with the server's VAPID key (reusing a subscription to the same key)
 * and registers the subscription with the server. Call it from a click handler. Rejects with a NotificationError
 * (unsupported browser, permission denied or dismissed, no Web Push on the server) or an ImError (the server refused
 * the registration).
 * @param {import('./http.js').HttpApi} http
 * @param {{serviceWorkerUrl: string, scope?: string, deviceId?: string, env?: object}} options
 * @returns {Promise<{subscription: PushSubscription, registration: ServiceWorkerRegistration}>}
 */
export async function enableNotifications(http, { serviceWorkerUrl, scope, deviceId, env = globalThis } = {}) {
  if (!serviceWorkerUrl) {
    throw new TypeError('enableNotifications needs serviceWorkerUrl');
  }
  if (!notificationsSupported(env)) {
    throw new NotificationError('unsupported', 'this browser cannot receive notifications (no service worker or'
      + ' Push API; on iOS, add the page to the home screen first)');
  }
  await permission(env);
  const config = await http.pushConfig();
  if (!config?.vapidPublicKey || !(config.providers ?? []).some((p) => String(p).toLowerCase() === 'webpush')) {
    throw new NotificationError('unavailable', 'the server does not send Web Push notifications');
  }
  const key = base64UrlToBytes(config.vapidPublicKey);
  const registration = await activated(await env.navigator.serviceWorker.register(serviceWorkerUrl,
    scope ? { scope } : undefined));
  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !sameBytes(subscription.options?.applicationServerKey, key)) {
    await subscription.unsubscribe(); // subscribed to another key (the server's key changed): a new one is needed
    subscription = null;
  }
  if (!subscription) {
    subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  }
  const { endpoint, keys } = subscription.toJSON();
  await http.registerPush(deviceId, { provider: 'webpush', subscription: { endpoint, keys } });
  return { subscription, registration };
}

/**
 * Turns them off: the server forgets the device's registration (none is fine) and the browser's subscription is
 * cancelled. Resolves with whether the server had one.
 * @param {import('./http.js').HttpApi} http
 * @param {{serviceWorkerUrl?: string, scope?: string, deviceId?: string, env?: object}} [options]
 */
export async function disableNotifications(http, { serviceWorkerUrl, scope, deviceId, env = globalThis } = {}) {
  let had = true;
  try {
    await http.unregisterPush(deviceId);
  } catch (e) {
    if (e?.status !== 404) {
      throw e;
    }
    had = false;
  }
  if (notificationsSupported(env)) {
    const registration = await env.navigator.serviceWorker.getRegistration(scope ?? serviceWorkerUrl);
    const subscription = await registration?.pushManager.getSubscription();
    await subscription?.unsubscribe();
  }
  return had;
}
