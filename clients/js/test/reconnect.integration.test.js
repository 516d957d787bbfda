// Against a running pipeline (bin/im local, or push-gateway's JsClientIT): a receiver's socket is cut (TCP reset,
// through a proxy) at least 20 times while a sender posts 1,000 messages; every message must reach the
// application exactly once and in order. Needs IM_JS_IT_URL (the gateway, with IM_AUTH_DEV_TOKENS=true) and a
// WebSocket global (Node 22+, or Node 20 with --experimental-websocket); skipped otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { HttpApi, ImClient, TokenSource } from '../src/index.js';

const url = process.env.IM_JS_IT_URL;
const messages = Number(process.env.IM_JS_IT_MESSAGES ?? 1000);
const kills = Number(process.env.IM_JS_IT_KILLS ?? 25);
const skip = !url ? 'IM_JS_IT_URL is not set (run JsClientIT, or point it at bin/im local)'
  : typeof WebSocket === 'undefined' ? 'no WebSocket global: Node 22+, or Node 20 with --experimental-websocket'
    : false;

/** A TCP proxy to the gateway whose connections can be reset on demand. */
async function proxy(target) {
  const { hostname, port } = new URL(target);
  const sockets = new Set();
  const server = net.createServer((down) => {
    const up = net.connect(Number(port), hostname);
    const pair = { down, up };
    sockets.add(pair);
    down.pipe(up).pipe(down);
    const drop = () => { sockets.delete(pair); down.destroy(); up.destroy(); };
    down.on('error', drop).on('close', drop);
    up.on('error', drop).on('close', drop);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    live: () => sockets.size,
    resetAll() {
      const n = sockets.size;
      for (const { down, up } of sockets) { down.resetAndDestroy(); up.destroy(); }
      sockets.clear();
      return n;
    },
    close: () => new Promise((r) => { server.close(r); }),
  };
}

/** POST /v1/messages, again with the same clientMsgId after a 429 (the sends quota) or 503. */
async function post(api, message) {
  for (;;) {
    try {
      return await api.postMessage(message);
    } catch (e) {
      if (e.status !== 429 && e.status !== 503) throw e;
      await new Promise((r) => setTimeout(r, e.retryAfterMs ?? 200));
    }
  }
}

async function until(cond, timeoutMs, what) {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test(`exactly once, in order: ${messages} messages while the receiver's socket is cut ${kills}+ times`,
  { skip, timeout: 300_000 }, async () => {
    const run = process.env.IM_JS_IT_RUN ?? Date.now().toString(36);
    const sender = `js-alice-${run}`;
    const receiver = `js-bob-${run}`;
    const tokens = (user, device) => new TokenSource(() => HttpApi.devToken(url, user, device));
    const p = await proxy(url);
    const bob = new ImClient({ baseUrl: p.url, user: receiver, device: 'phone',
      token: ({ refresh }) => tokens(receiver, 'phone').get(refresh),
      ackEvery: 20, ackAfterMs: 100, backoff: { initialMs: 50, maxMs: 500 } });
    const alice = new HttpApi({ baseUrl: url, user: sender, device: 'laptop', tokens: tokens(sender, 'laptop') });
    const bodies = [];
    bob.on('entry', (e) => {
      if (e.type === 'MESSAGE' && e.senderId === sender) bodies.push(e.body);
    });
    try {
      // Given bob connected (through the proxy) and up to date
      const synced = new Promise((r) => bob.on('status', (s) => s === 'synced' && r()));
      await bob.connect();
      await synced;

      // When alice posts the messages one after another and bob's socket is reset every few messages
      const every = Math.max(1, Math.floor(messages / kills));
      let cuts = 0;
      for (let i = 0; i < messages; i++) {
        await post(alice, { to: receiver, body: `m-${i}`, clientMsgId: `js-it-${run}-${i}` });
        if (i % every === every - 1 && cuts < kills) {
          await until(() => p.live() > 0, 30_000, 'bob to reconnect');
          // let some entries flow on this socket first, so each cut lands mid-stream with entries not yet ACKed
          const before = bodies.length;
          await until(() => bodies.length > before || bodies.length >= i + 1, 10_000, 'entries on the new socket');
          cuts += p.resetAll() > 0 ? 1 : 0;
        }
      }

      // Then bob's application got every message exactly once, in order
      await until(() => bodies.length >= messages, 120_000, `${messages} messages (have ${bodies.length})`);
      await new Promise((r) => setTimeout(r, 500)); // a late duplicate would show up here
      const expected = Array.from({ length: messages }, (_, i) => `m-${i}`);
      const seen = new Set(bodies);
      const lost = expected.filter((b) => !seen.has(b)).length;
      const duplicated = bodies.length - seen.size;
      const inOrder = bodies.every((b, i) => b === expected[i]);
      console.log(`RESULT messages=${messages} disconnects=${cuts} sockets=${bob.stats.sockets}`
        + ` lost=${lost} duplicated=${duplicated} inOrder=${inOrder}`
        + ` redeliveriesDropped=${bob.stats.duplicates}`);
      assert.ok(cuts >= 20, `only ${cuts} forced disconnects`);
      assert.equal(lost, 0);
      assert.equal(duplicated, 0);
      assert.deepEqual(bodies, expected);
    } finally {
      bob.close();
      p.resetAll();
      await p.close();
    }
  });
