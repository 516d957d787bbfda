// Notifications: the push routes of HttpApi against the fake gateway, and enableNotifications in a fake browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpApi, ImClient, ImError, NotificationError, TokenSource, base64UrlToBytes } from '../src/index.js';
import { FakeGateway } from '../testing/fake-gateway.js';
import { fakeBrowser } from '../testing/fake-browser.js';

const webpush = (endpoint = 'https://push.test/sub/x') => ({
  provider: 'webpush', subscription: { endpoint, keys: { p256dh: 'BPk', auth: 'au' } },
});

function api(gw, device = 'phone') {
  return new HttpApi({ baseUrl: 'http://gw.test', user: 'bob', device, tokens: new TokenSource('t1'),
    fetch: gw.fetch });
}

function client(gw) {
  return new ImClient({ baseUrl: 'http://gw.test', user: 'bob', device: 'phone', token: 't1', fetch: gw.fetch,
    WebSocket: gw.WebSocket });
}

test('push routes: config, register for this device or another, read back redacted, unregister, then 404', async () => {
  // Given a gateway with Web Push on
  const gw = new FakeGateway();
  const http = api(gw);
  // When the app reads the config, Then it has the VAPID key and the providers
  assert.deepEqual(await http.pushConfig(), gw.pushConfig);
  // When it registers this device (no device id) and another device by id
  await http.registerPush(webpush());
  await http.registerPush('laptop', webpush('https://push.test/sub/y'));
  // Then both landed on their devices' paths
  assert.deepEqual(gw.requests.filter(([m]) => m === 'PUT'),
    [['PUT', '/v1/users/bob/devices/phone/push'], ['PUT', '/v1/users/bob/devices/laptop/push']]);
  assert.deepEqual(await http.pushRegistration(),
    { userId: 'bob', deviceId: 'phone', provider: 'webpush', pushService: 'https://push.test' });
  // When this device unregisters, Then it is gone (404 as an ImError), the other one is kept
  assert.equal(await http.unregisterPush(), null);
  await assert.rejects(http.pushRegistration(), (e) => e instanceof ImError && e.status === 404);
  await assert.rejects(http.unregisterPush(), (e) => e instanceof ImError && e.status === 404);
  assert.equal((await http.pushRegistration('laptop')).deviceId, 'laptop');
  assert.equal(gw.registrations.get('bob/laptop').subscription.endpoint, 'https://push.test/sub/y');
});

test('push routes: an endpoint outside the allow-list is an ImError 400 with the reason', async () => {
  const gw = new FakeGateway();
  await assert.rejects(api(gw).registerPush(webpush('http://10.0.0.1/steal')),
    (e) => e instanceof ImError && e.status === 400 && e.error.includes('not under a push service'));
  assert.equal(gw.registrations.size, 0);
});

test('push routes: a client without a device id needs one passed', async () => {
  await assert.rejects(api(new FakeGateway(), null).registerPush(webpush()), TypeError);
});

test('base64UrlToBytes: base64url with or without padding to bytes; anything else is refused', () => {
  assert.deepEqual([...base64UrlToBytes('AQID')], [1, 2, 3]);
  assert.deepEqual([...base64UrlToBytes('-_8')], [0xfb, 0xff]);
  assert.deepEqual([...base64UrlToBytes('-_8=')], [0xfb, 0xff]);
  assert.throws(() => base64UrlToBytes('a+b/'), TypeError);
  assert.throws(() => base64UrlToBytes('abcde'), TypeError);
  // the fake gateway's key is an uncompressed P-256 point: 65 bytes starting with 4
  const key = base64UrlToBytes(new FakeGateway().pushConfig.vapidPublicKey);
  assert.equal(key.length, 65);
  assert.equal(key[0], 4);
});

test('enableNotifications: permission asked, worker registered, subscribed to the VAPID key, registered', async () => {
  // Given a browser that has not been asked yet and says yes
  const gw = new FakeGateway();
  const env = fakeBrowser();
  // When the app turns notifications on
  const { subscription } = await client(gw).enableNotifications({ serviceWorkerUrl: '/sw.js', env });
  // Then the user was asked once, the worker registered, the subscription uses the server's key (as bytes)
  assert.equal(env.prompts, 1);
  assert.deepEqual(env.registered, ['/sw.js']);
  const calls = env.registration('/').pushManager.subscribeCalls;
  assert.equal(calls.length, 1);
  assert.equal(calls[0].userVisibleOnly, true);
  assert.deepEqual(calls[0].applicationServerKey, base64UrlToBytes(gw.pushConfig.vapidPublicKey));
  // and the server holds exactly the endpoint and keys for this device
  assert.deepEqual(gw.registrations.get('bob/phone'), { provider: 'webpush',
    subscription: { endpoint: subscription.endpoint, keys: { p256dh: 'BPk-p256dh', auth: 'auth-16' } } });
});

test('enableNotifications again: the same subscription registered again, no new prompt or subscription', async () => {
  // Given notifications already on
  const gw = new FakeGateway();
  const env = fakeBrowser();
  const c = client(gw);
  const first = await c.enableNotifications({ serviceWorkerUrl: '/sw.js', env });
  // When turned on again (a reload, a new sign-in)
  const second = await c.enableNotifications({ serviceWorkerUrl: '/sw.js', env });
  // Then nothing new was asked of the browser, and the server got the same endpoint twice
  assert.equal(second.subscription, first.subscription);
  assert.equal(env.prompts, 1);
  assert.equal(env.registration('/').pushManager.subscribeCalls.length, 1);
  assert.equal(gw.requests.filter(([m]) => m === 'PUT').length, 2);
});

test('enableNotifications after the server changed its VAPID key: the old subscription is replaced', async () => {
  // Given a subscription to the old key
  const gw = new FakeGateway();
  const env = fakeBrowser();
  const c = client(gw);
  const old = await c.enableNotifications({ serviceWorkerUrl: '/sw.js', env });
  // When the server's key changes and notifications are turned on again
  gw.pushConfig = { ...gw.pushConfig, vapidPublicKey: 'BA' + 'BAUG'.repeat(21) + 'B' };
  const now = await c.enableNotifications({ serviceWorkerUrl: '/sw.js', env });
  // Then a new subscription to the new key is registered
  assert.notEqual(now.subscription.endpoint, old.subscription.endpoint);
  assert.deepEqual(new Uint8Array(now.subscription.options.applicationServerKey),
    base64UrlToBytes(gw.pushConfig.vapidPublicKey));
  assert.equal(gw.registrations.get('bob/phone').subscription.endpoint, now.subscription.endpoint);
});

test('enableNotifications where the browser has no Push API: NotificationError unsupported, nothing sent', async () => {
  const gw = new FakeGateway();
  const env = fakeBrowser();
  delete env.PushManager;
  await assert.rejects(client(gw).enableNotifications({ serviceWorkerUrl: '/sw.js', env }),
    (e) => e instanceof NotificationError && e.reason === 'unsupported');
  await assert.rejects(client(gw).enableNotifications({ serviceWorkerUrl: '/sw.js', env: {} }),
    (e) => e instanceof NotificationError && e.reason === 'unsupported');
  assert.deepEqual(gw.requests, []);
});

test('enableNotifications refused by the user: denied or dismissed, no subscription, nothing registered', async () => {
  for (const [permission, answer, reason, prompts] of [['default', 'denied', 'denied', 1],
    ['default', 'default', 'dismissed', 1], ['denied', 'granted', 'denied', 0]]) {
    // Given a browser whose permission is `permission` and whose prompt answers `answer`
    const gw = new FakeGateway();
    const env = fakeBrowser({ permission, answer });
    // When the app turns notifications on, Then it is refused with the reason (a blocked site is not asked again)
    await assert.rejects(client(gw).enableNotifications({ serviceWorkerUrl: '/sw.js', env }),
      (e) => e instanceof NotificationError && e.reason === reason, `${permission} / ${answer}`);
    assert.equal(env.prompts, prompts);
    assert.deepEqual(env.registered, []);
    assert.equal(gw.registrations.size, 0);
  }
});

test('enableNotifications where the server has no Web Push: NotificationError unavailable', async () => {
  const gw = new FakeGateway();
  gw.pushConfig = { vapidPublicKey: null, providers: ['fcm'] };
  await assert.rejects(client(gw).enableNotifications({ serviceWorkerUrl: '/sw.js', env: fakeBrowser() }),
    (e) => e instanceof NotificationError && e.reason === 'unavailable');
  assert.equal(gw.registrations.size, 0);
  // a provider name in another case is the same provider
  gw.pushConfig = { vapidPublicKey: new FakeGateway().pushConfig.vapidPublicKey, providers: ['WEBPUSH'] };
  await client(gw).enableNotifications({ serviceWorkerUrl: '/sw.js', env: fakeBrowser() });
  assert.equal(gw.registrations.size, 1);
});

test('enableNotifications: a worker that fails to install, and a refused endpoint, reject', async () => {
  const gw = new FakeGateway();
  const failing = fakeBrowser({ failInstall: true });
  await assert.rejects(client(gw).enableNotifications({ serviceWorkerUrl: '/sw.js', env: failing }),
    (e) => e instanceof NotificationError && e.reason === 'unsupported');
  gw.pushEndpoints = ['https://elsewhere.test/'];
  await assert.rejects(client(gw).enableNotifications({ serviceWorkerUrl: '/sw.js', env: fakeBrowser() }),
    (e) => e instanceof ImError && e.status === 400);
});

test('disableNotifications: the server forgets the device and the subscription is cancelled', async () => {
  // Given notifications on
  const gw = new FakeGateway();
  const env = fakeBrowser();
  const c = client(gw);
  await c.enableNotifications({ serviceWorkerUrl: '/sw.js', env });
  // When turned off, Then the server had it and has it no more, and the browser holds no subscription
  assert.equal(await c.disableNotifications({ serviceWorkerUrl: '/sw.js', env }), true);
  assert.equal(gw.registrations.size, 0);
  assert.equal(env.registration('/').pushManager.current, null);
  // and turning off again is not an error
  assert.equal(await c.disableNotifications({ serviceWorkerUrl: '/sw.js', env }), false);
});
