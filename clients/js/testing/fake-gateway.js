// A gateway in memory that speaks the device protocol to an injected WebSocket class: a log of entries with cursors
// "c<n>" (the position after the n-th entry), a committed cursor moved by ACKs, a backlog after it (or after the
// device's `?cursor=`) on every connection followed by "synced", and hooks to close sockets the ways the real gateway does. Its `fetch` answers
// the push routes (/v1/push/config, /v1/users/{u}/devices/{d}/push) as the notify module does.

const json = (status, body) => new Response(body === undefined ? null : JSON.stringify(body), {
  status, headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
});
const PUSH_PATH = /^\/v1\/users\/([^/]+)\/devices\/([^/]+)\/push$/;

export class FakeGateway {
  constructor({ entries = [], tokens = ['t1'] } = {}) {
    this.log = [];
    this.committed = 0;
    this.acks = [];
    this.sends = [];
    this.sockets = [];
    this.tokens = new Set(tokens);
    this.onOpen = null; // (socket) => void, right after the socket opened (it may close it)
    this.onSend = (socket, frame) => socket.push({ type: 'sent', clientMsgId: frame.clientMsgId, messageId: 'm-' + frame.clientMsgId });
    entries.forEach((e) => this.append(e));
    /** What GET /v1/push/config answers, and the Web Push endpoint prefixes a registration may use. */
    this.pushConfig = { vapidPublicKey: 'BA' + 'AQID'.repeat(21) + 'A', providers: ['webpush'] };
    this.pushEndpoints = ['https://push.test/'];
    /** "user/device" -> the registration as PUT; and every HTTP call as [method, path]. */
    this.registrations = new Map();
    this.requests = [];
    const gateway = this;
    this.fetch = async (url, init = {}) => gateway.http(new URL(url), init);
    this.WebSocket = class FakeSocket {
      constructor(url) {
        this.url = new URL(url);
        this.readyState = 0;
        this.pushed = 0;
        gateway.sockets.push(this);
        setTimeout(() => gateway.accept(this), 0);
      }

      send(data) {
        if (this.readyState !== 1) {
          throw new Error('not open');
        }
        gateway.receive(this, JSON.parse(data));
      }

      close(code = 1000, reason = '') {
        this.serverClose(code, reason);
      }

      push(frame) {
        if (this.readyState === 1) {
          setTimeout(() => this.onmessage?.({ data: JSON.stringify(frame) }), 0);
        }
      }

      serverClose(code, reason = '') {
        if (this.readyState >= 2) {
          return;
        }
        this.readyState = 3;
        setTimeout(() => this.onclose?.({ code, reason }), 0);
      }
    };
  }

  /** Appends an entry (default source "inbox", next seq) and pushes it to every open socket. */
  append(entry = {}) {
    const source = entry.source ?? 'inbox';
    const seq = entry.seq ?? this.log.filter((e) => e.source === source).length + 1;
    const e = { type: 'MESSAGE', conversationId: 'd:a:b', ...entry, source, seq };
    this.log.push(e);
    const cursor = 'c' + this.log.length;
    for (const s of this.sockets) {
      if (s.readyState === 1 && s.synced) {
        this.pushEntry(s, this.log.length - 1);
      }
    }
    return { entry: e, cursor };
  }

  pushEntry(socket, index) {
    socket.push({ type: 'entry', entry: this.log[index], cursor: 'c' + (index + 1) });
    socket.pushed = Math.max(socket.pushed, index + 1);
  }

  accept(socket) {
    const token = socket.url.searchParams.get('access_token');
    if (!this.tokens.has(token)) {
      socket.serverClose(1006); // refused at the upgrade (401): a browser only sees 1006
      return;
    }
    socket.readyState = 1;
    socket.onopen?.({});
    this.onOpen?.(socket);
    if (socket.readyState !== 1) {
      return;
    }
    // The backlog starts after the device's own cursor (?cursor=c<n>) when it sent one, else after the committed one.
    const own = socket.url.searchParams.get('cursor');
    const from = own === null ? this.committed : Number(own.slice(1));
    socket.pushed = from;
    for (let i = from; i < this.log.length; i++) {
      this.pushEntry(socket, i);
    }
    socket.push({ type: 'synced', cursor: 'c' + this.log.length });
    socket.synced = true;
  }

  receive(socket, frame) {
    if (frame.type === 'ack') {
      const n = Number(frame.cursor.slice(1));
      if (n > socket.pushed) {
        socket.push({ type: 'error', error: 'ack beyond what was pushed' });
        return;
      }
      this.acks.push(frame.cursor);
      this.committed = Math.max(this.committed, n);
    } else if (frame.type === 'send') {
      this.sends.push(frame);
      this.onSend(socket, frame);
    }
  }

  open() {
    return this.sockets.filter((s) => s.readyState === 1);
  }

  /** One HTTP call: a token of `tokens`, then the push routes; anything else is 404. */
  http(url, { method = 'GET', headers = {}, body } = {}) {
    const path = url.pathname;
    this.requests.push([method, path]);
    if (!this.tokens.has((headers.Authorization ?? '').replace(/^Bearer /, ''))) {
      return json(401, { error: 'missing or invalid token' });
    }
    if (path === '/v1/push/config' && method === 'GET') {
      return json(200, this.pushConfig);
    }
    const m = PUSH_PATH.exec(path);
    if (!m) {
      return json(404, { error: 'no such route' });
    }
    const key = decodeURIComponent(m[1]) + '/' + decodeURIComponent(m[2]);
    const held = this.registrations.get(key);
    if (method === 'PUT') {
      const r = JSON.parse(body ?? 'null');
      const endpoint = r?.subscription?.endpoint;
      if (r?.provider !== 'webpush' || !endpoint || !r.subscription.keys?.p256dh || !r.subscription.keys?.auth) {
        return json(400, { error: 'a webpush registration needs subscription.endpoint and keys' });
      }
      if (!this.pushEndpoints.some((p) => endpoint.startsWith(p))) {
        return json(400, { error: "'subscription.endpoint' is not under a push service this server sends to" });
      }
      this.registrations.set(key, r);
      return json(202, { userId: decodeURIComponent(m[1]), deviceId: decodeURIComponent(m[2]),
        registrationId: 'r' + this.requests.length });
    }
    if (!held) {
      return json(404, { error: 'no push registration for this device' });
    }
    if (method === 'GET') {
      // redacted as the server does: no endpoint path (it is a capability URL), no keys
      return json(200, { userId: decodeURIComponent(m[1]), deviceId: decodeURIComponent(m[2]), provider: held.provider,
        pushService: new URL(held.subscription.endpoint).origin });
    }
    if (method === 'DELETE') {
      this.registrations.delete(key);
      return json(204);
    }
    return json(405, { error: 'method not allowed' });
  }
}

/** Waits until cond() holds, checking every few ms (fails after timeoutMs). */
export async function until(cond, timeoutMs = 3000) {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) {
      throw new Error('condition not met in ' + timeoutMs + ' ms: ' + cond);
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}
