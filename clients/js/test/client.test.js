// ImClient against a gateway in memory (fake-gateway.js): each test is Given / When / Then.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff, HttpApi, ImClient, ImError, MemoryStore, TokenSource } from '../src/index.js';
import { FakeGateway, until } from '../testing/fake-gateway.js';

function client(gw, options = {}) {
  let n = 0;
  return new ImClient({
    baseUrl: 'http://gw.test', user: 'bob', device: 'phone', token: 't1', WebSocket: gw.WebSocket,
    backoff: { initialMs: 2, maxMs: 20 }, ackEvery: 3, ackAfterMs: 10, idGenerator: () => 'id-' + ++n, ...options,
  });
}

function collect(c) {
  const got = [];
  c.on('entry', (e) => { got.push(`${e.source}:${e.seq}`); });
  return got;
}

test('the backlog is handed over in order and ACKed cumulatively every N entries, the rest after T ms', async () => {
  // Given a gateway holding 7 entries for the device
  const gw = new FakeGateway();
  for (let i = 0; i < 7; i++) gw.append();
  const c = client(gw);
  const got = collect(c);
  // When the client connects (ACK every 3 entries or 10 ms)
  await c.connect();
  await until(() => gw.committed === 7);
  // Then it saw each entry once, in order, and ACKed c3 and c6 by count, then c7 by time: 3 ACKs for 7 entries
  assert.deepEqual(got, [1, 2, 3, 4, 5, 6, 7].map((s) => 'inbox:' + s));
  assert.deepEqual(gw.acks, ['c3', 'c6', 'c7']);
  c.close();
});

test('live entries after synced are ACKed by time when fewer than N arrive', async () => {
  // Given a connected, synced client
  const gw = new FakeGateway();
  const c = client(gw, { ackEvery: 50, ackAfterMs: 15 });
  const got = collect(c);
  const synced = new Promise((r) => c.on('status', (s) => s === 'synced' && r()));
  await c.connect();
  await synced;
  // When two live entries arrive
  gw.append();
  gw.append();
  // Then one ACK with the second cursor follows a few ms later
  await until(() => gw.acks.length === 1);
  assert.deepEqual(gw.acks, ['c2']);
  assert.deepEqual(got, ['inbox:1', 'inbox:2']);
  c.close();
});

test('forced disconnects mid-stream: resumed from the committed cursor, no entry lost or repeated', async () => {
  // Given a gateway that cuts every socket after it pushed 4 live entries
  const gw = new FakeGateway();
  const c = client(gw, { ackEvery: 3, ackAfterMs: 50 });
  const got = collect(c);
  await c.connect();
  // When 200 entries are published while the gateway drops the socket 20 times
  for (let i = 0; i < 200; i++) {
    gw.append();
    if (i % 10 === 9) {
      gw.open().forEach((s) => s.serverClose(1001, 'going away'));
      await until(() => gw.open().length === 1);
    }
  }
  await until(() => got.length >= 200 && gw.committed === 200);
  // Then every entry came exactly once, in order, although unACKed ones were pushed again after each reconnect
  assert.deepEqual(got, Array.from({ length: 200 }, (_, i) => 'inbox:' + (i + 1)));
  assert.ok(gw.sockets.length >= 21, 'reconnected after every drop: ' + gw.sockets.length);
  c.close();
});

test('deduplicated by source + seq: the same seq of another source is another entry, a redelivery is not', async () => {
  // Given entries of the inbox and of a large group's timeline with overlapping seqs
  const gw = new FakeGateway({ entries: [{ seq: 1 }, { source: '#g1', seq: 1 }, { seq: 2 }, { source: '#g1', seq: 2 }] });
  const c = client(gw, { ackEvery: 100, ackAfterMs: 1000 });
  const got = collect(c);
  await c.connect();
  await until(() => got.length === 4);
  // When the gateway redelivers (a retry after an ACK timeout) the first three on the same socket
  const s = gw.open()[0];
  for (let i = 0; i < 3; i++) gw.pushEntry(s, i);
  gw.append({ source: '#g1' });
  await until(() => got.length >= 5);
  // Then both sources' seq 1 and 2 were handed over once each, then the new group entry
  assert.deepEqual(got, ['inbox:1', '#g1:1', 'inbox:2', '#g1:2', '#g1:3']);
  c.close();
});

test('reconnect delays back off with full jitter and reset only once a socket delivered its backlog', async () => {
  // Given a backoff of 100 ms doubling up to 1 s, and a random source at one half
  const b = new Backoff({ initialMs: 100, maxMs: 1000, random: () => 0.5 });
  // When five reconnects fail in a row, Then the delays are half of 100, 200, 400, 800, 1000 (the cap)
  assert.deepEqual([1, 2, 3, 4, 5].map(() => b.next()), [50, 100, 200, 400, 500]);
  // and with another random draw the delay is another share of the same cap
  b.random = () => 0.1;
  assert.equal(b.next(), 100);
  b.reset();
  assert.equal(b.next(), 10);

  // Given a gateway that closes every socket right after it opened, three times
  const gw = new FakeGateway({ entries: [{}] });
  let drops = 3;
  gw.onOpen = (s) => { if (drops-- > 0) s.serverClose(1011, 'server error'); };
  const c = client(gw);
  const statuses = [];
  c.on('status', (st) => statuses.push(st));
  await c.connect();
  // Then the backoff grew on every one (no tight reconnect loop), and is reset after the fourth socket synced
  await until(() => statuses.includes('synced'));
  assert.equal(gw.sockets.length, 4);
  assert.equal(c.backoff.attempt, 0);
  assert.equal(statuses.filter((st) => st === 'offline').length, 3);
  c.close();
});

test('resync: the client reconnects at once and resumes from its committed cursor', async () => {
  // Given a client that has handled and ACKed 3 entries
  const gw = new FakeGateway();
  for (let i = 0; i < 3; i++) gw.append();
  const c = client(gw, { ackEvery: 3, backoff: { initialMs: 5000, maxMs: 5000 } });
  const got = collect(c);
  const resyncs = [];
  c.on('resync', (f) => resyncs.push(f.reason));
  await c.connect();
  await until(() => gw.committed === 3);
  // When the gateway sends resync and closes with 4008, then 2 more entries are published
  const s = gw.open()[0];
  s.push({ type: 'resync', reason: 'window full', cursor: 'c3' });
  s.serverClose(4008, 'resync');
  gw.append();
  gw.append();
  // Then the client is back without the 5 s backoff and has the 2 new entries once
  await until(() => got.length === 5, 1000);
  assert.deepEqual(resyncs, ['window full']);
  assert.deepEqual(got, [1, 2, 3, 4, 5].map((i) => 'inbox:' + i));
  c.close();
});

test('redirect: the client reconnects at once to the instance the frame names and resumes from its cursor', async () => {
  // Given a client that has handled and ACKed 3 entries on gw.test
  const gw = new FakeGateway();
  for (let i = 0; i < 3; i++) gw.append();
  const c = client(gw, { ackEvery: 3, backoff: { initialMs: 5000, maxMs: 5000 } });
  const got = collect(c);
  await c.connect();
  await until(() => gw.committed === 3);
  // When the gateway sends it to another instance and closes with 4013, then 2 more entries are published
  const s = gw.open()[0];
  s.push({ type: 'redirect', url: 'http://owner.test:8081/v1/ws?device=phone', reason: 'moved' });
  s.serverClose(4013, 'moved');
  gw.append();
  gw.append();
  // Then the client is on owner.test without the 5 s backoff, with the 2 new entries once
  await until(() => got.length === 5, 1000);
  assert.equal(gw.open()[0].url.host, 'owner.test:8081');
  assert.equal(gw.open()[0].url.protocol, 'ws:');
  assert.deepEqual(got, [1, 2, 3, 4, 5].map((i) => 'inbox:' + i));
  c.close();
});

test('close 4001: the token provider is asked for a fresh token and the client reconnects with it', async () => {
  // Given a token provider that hands out t1, then t2 when asked to refresh
  const gw = new FakeGateway({ tokens: ['t1', 't2'] });
  const asked = [];
  const c = client(gw, { token: ({ refresh }) => { asked.push(refresh); return refresh ? 't2' : 't1'; } });
  await c.connect();
  // When t1 expires: the gateway closes with 4001
  gw.tokens.delete('t1');
  gw.open()[0].serverClose(4001, 'token expired');
  // Then the next socket uses t2
  await until(() => gw.open().length === 1 && gw.sockets.length === 2);
  assert.equal(gw.sockets[1].url.searchParams.get('access_token'), 't2');
  assert.deepEqual(asked, [false, true]);
  c.close();
});

test('a socket refused at the upgrade (browsers see 1006) also refreshes the token', async () => {
  // Given a provider whose first token the gateway does not accept
  const gw = new FakeGateway({ tokens: ['fresh'] });
  const c = client(gw, { token: ({ refresh }) => (refresh ? 'fresh' : 'stale') });
  // When connecting, Then the second socket carries the fresh token and opens
  await c.connect();
  assert.equal(gw.sockets.length, 2);
  assert.equal(gw.open()[0].url.searchParams.get('access_token'), 'fresh');
  c.close();
});

test('close 4012 (replaced by a newer socket of the user): the client stays closed', async () => {
  // Given a connected client
  const gw = new FakeGateway();
  const c = client(gw);
  const statuses = [];
  c.on('status', (s, d) => statuses.push(d?.code ? `${s}:${d.code}` : s));
  await c.connect();
  // When the gateway replaces its socket
  gw.open()[0].serverClose(4012, 'replaced');
  await until(() => statuses.includes('replaced:4012'));
  // Then no new socket is opened, even after several backoff periods
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(gw.sockets.length, 1);
  assert.equal(c.status, 'replaced');
});

test('send: a generated clientMsgId, kept when a 429 makes the client send it again', async () => {
  // Given a gateway whose first answer to a send is 429 (too many sends waiting)
  const gw = new FakeGateway();
  let refusals = 1;
  gw.onSend = (s, f) => s.push(refusals-- > 0
    ? { type: 'error', clientMsgId: f.clientMsgId, status: 429, error: 'too many sends in flight' }
    : { type: 'sent', clientMsgId: f.clientMsgId, messageId: 'm1', conversationId: 'd:alice:bob' });
  const c = client(gw);
  await c.connect();
  // When the app sends once
  const sent = await c.send({ to: 'alice', body: 'hi' });
  // Then the frame went twice with the same id, and the send resolved with the sent frame
  assert.deepEqual(gw.sends.map((f) => f.clientMsgId), ['id-1', 'id-1']);
  assert.equal(sent.messageId, 'm1');
  c.close();
});

test('send: a socket lost before the answer sends it again, same clientMsgId, on the next socket', async () => {
  // Given a gateway that drops the socket instead of answering the first send
  const gw = new FakeGateway();
  let drop = true;
  gw.onSend = (s, f) => {
    if (drop) { drop = false; s.serverClose(1001); return; }
    s.push({ type: 'sent', clientMsgId: f.clientMsgId, messageId: 'm-' + f.clientMsgId });
  };
  const c = client(gw);
  await c.connect();
  // When the app sends
  const sent = await c.send({ to: 'alice', body: 'hi', clientMsgId: 'mine-1' });
  // Then it was sent on two sockets with the caller's id, and answered once
  assert.deepEqual(gw.sends.map((f) => f.clientMsgId), ['mine-1', 'mine-1']);
  assert.equal(sent.messageId, 'm-mine-1');
  assert.equal(gw.sockets.length, 2);
  c.close();
});

test('send: any other refusal rejects with an ImError carrying status and error', async () => {
  const gw = new FakeGateway();
  gw.onSend = (s, f) => s.push({ type: 'error', clientMsgId: f.clientMsgId, status: 403, error: 'not a member' });
  const c = client(gw);
  await c.connect();
  await assert.rejects(c.send({ groupId: 'g', body: 'x' }),
    (e) => e instanceof ImError && e.status === 403 && e.error === 'not a member');
  c.close();
});

test("a reconnect resumes after the device's own cursor: an ACK lost with the socket brings nothing again", async () => {
  // Given a gateway whose ACKs are lost (its committed cursor stays at the start) and a client that ACKs every 3
  const gw = new FakeGateway({ entries: [{}, {}, {}] });
  gw.receive = () => {};
  const c = client(gw, { ackEvery: 3 });
  const got = collect(c);
  await c.connect();
  await until(() => got.length === 3 && c.state.cursor === 'c3');
  // When the socket is dropped and 2 more entries are published
  gw.open()[0].serverClose(1001, 'going away');
  await until(() => gw.open().length === 1);
  gw.append();
  gw.append();
  await until(() => got.length === 5);
  // Then the first socket sent no cursor, the second its own (c3): the gateway pushed nothing again
  assert.equal(gw.sockets[0].url.searchParams.get('cursor'), null);
  assert.equal(gw.sockets[1].url.searchParams.get('cursor'), 'c3');
  assert.equal(gw.committed, 0);
  assert.equal(c.stats.duplicates, 0);
  assert.deepEqual(got, [1, 2, 3, 4, 5].map((s) => 'inbox:' + s));
  c.close();
});

test('an app restarted with its store does not get entries it handled but had not ACKed yet', async () => {
  // Given a client that handled 2 entries and saved its state with the first ACK, then died before the next ACK
  const store = new MemoryStore();
  const gw = new FakeGateway({ entries: [{}, {}] });
  const first = client(gw, { store, ackEvery: 2 });
  const gotFirst = collect(first);
  await first.connect();
  await until(() => gw.committed === 2);
  gw.append();
  await until(() => gotFirst.length === 3);
  await first.store.save(first.state); // the app saved before the process died, the ACK never went out
  first.close();
  // When it restarts with the same store and the gateway pushes from its committed cursor (c2) again
  const second = client(gw, { store });
  const gotSecond = collect(second);
  await second.connect();
  gw.append();
  await until(() => gotSecond.length === 1 && gw.committed === 4);
  // Then only the new entry is handed over
  assert.deepEqual(gotSecond, ['inbox:4']);
  second.close();
});

test('entries(): an async iterator in order; an entry is ACKed only after the loop asked for the next one', async () => {
  // Given 3 entries and ACK after every entry
  const gw = new FakeGateway({ entries: [{}, {}, {}] });
  const c = client(gw, { ackEvery: 1 });
  await c.connect();
  const seen = [];
  // When the loop takes two and stops at the third
  for await (const e of c.entries()) {
    seen.push(e.seq);
    if (e.seq === 2) assert.deepEqual(gw.acks, ['c1']);
    if (e.seq === 3) break;
  }
  // Then it saw 1, 2, 3 and leaving the loop ACKed the third
  assert.deepEqual(seen, [1, 2, 3]);
  await until(() => gw.committed === 3);
  c.close();
});

test('a handler that throws: the entry is not ACKed and comes again on the next socket', async () => {
  // Given a handler that fails on its first call
  const gw = new FakeGateway({ entries: [{}, {}] });
  const c = client(gw, { ackEvery: 1 });
  const got = [];
  let fail = true;
  c.on('entry', (e) => {
    if (fail) { fail = false; throw new Error('disk full'); }
    got.push(e.seq);
  });
  const errors = [];
  c.on('error', (e) => errors.push(e.message));
  await c.connect();
  // Then the client reconnected and handed both entries over, in order
  await until(() => got.length === 2);
  assert.deepEqual(got, [1, 2]);
  assert.deepEqual(errors, ['disk full']);
  c.close();
});

test('HTTP: a 401 refreshes the token and repeats the call once; refusals are ImErrors with status and error', async () => {
  // Given a server that refuses the stale token and answers 429 to a history read
  const calls = [];
  const fetch = async (url, init) => {
    calls.push([init.method, url, init.headers.Authorization]);
    const json = (status, body, headers = {}) => new Response(JSON.stringify(body), { status, headers });
    if (init.headers.Authorization !== 'Bearer fresh') return json(401, { error: 'token expired' });
    if (url.includes('/messages')) return json(429, { error: 'too many waiting' }, { 'Retry-After': '1' });
    return json(200, { userId: 'bob', conversations: [{ conversationId: 'd:alice:bob', unread: 2 }], next: null });
  };
  const api = new HttpApi({ baseUrl: 'http://gw.test/', user: 'bob', device: 'phone', fetch,
    tokens: new TokenSource(({ refresh }) => (refresh ? 'fresh' : 'stale')) });
  // When listing conversations, Then the call went twice, the second with the fresh token
  const page = await api.conversations({ limit: 10 });
  assert.equal(page.conversations[0].unread, 2);
  assert.deepEqual(calls.map((c) => c[2]), ['Bearer stale', 'Bearer fresh']);
  assert.equal(calls[0][1], 'http://gw.test/v1/users/bob/conversations?limit=10');
  // When reading history, Then the 429 is an ImError with the reason and the wait
  await assert.rejects(api.history('d:alice:bob', { before: 7 }), (e) => e instanceof ImError && e.status === 429
    && e.error === 'too many waiting' && e.retryAfterMs === 1000);
  assert.equal(calls.at(-1)[1], 'http://gw.test/v1/conversations/d%3Aalice%3Abob/messages?limit=20&before=7');
});
