// The device connection (docs/reference/device-protocol.md): one WebSocket at /v1/ws, entries handed to the
// application in order and exactly once across reconnects, cumulative ACKs in batches, sends retried safely.
//
// Exactly once: the gateway resumes after the cursor the client sends on connect (`?cursor=`, the last one it saved
// and ACKed; without one, the committed cursor), so entries received but not yet ACKed come again; they are dropped
// by the per-source high-water mark (see stores.js). An entry is ACKed only after the
// application's handler has finished with it, and the store is saved before the ACK, so a crash never loses one.
// Order: frames are handled one at a time, in arrival order, each handler awaited before the next frame.
import { Backoff } from './backoff.js';
import { HttpApi, ImError, TokenSource } from './http.js';
import { disableNotifications, enableNotifications } from './push.js';
import { MemoryStore } from './stores.js';

const OPEN = 1;
/** Close codes after which the client does not reconnect (device-protocol.md#close-codes). */
const REPLACED = 4012;
const TOKEN_REFUSED = 4001;
const RESYNC = 4008;
/** The gateway sent this device to another instance (a `redirect` frame came first). */
const MOVED = 4013;

/** A random clientMsgId: crypto.randomUUID where there is one (browsers, Node 19+), else 128 random bits. */
function randomId() {
  const c = globalThis.crypto;
  if (c?.randomUUID) {
    return c.randomUUID();
  }
  const bytes = c?.getRandomValues ? c.getRandomValues(new Uint8Array(16))
    : Uint8Array.from({ length: 16 }, () => Math.floor(Math.random() * 256));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A device client: `connect()`, then entries via `on('entry')` or `entries()`, `send()`, and `http` for the API. */
export class ImClient {
  /**
   * @param {import('../index.d.ts').ClientOptions} options
   */
  constructor(options) {
    const {
      baseUrl = globalThis.location?.origin, user, device, token, store = new MemoryStore(),
      ackEvery = 50, ackAfterMs = 200, backoff = {}, WebSocket: WebSocketImpl, fetch: fetchImpl,
      random = Math.random, idGenerator,
    } = options;
    if (!baseUrl || !device || token === undefined) {
      throw new TypeError('ImClient needs baseUrl, device and token');
    }
    this.baseUrl = baseUrl.replace(/\/$/, '');
    this.user = user;
    this.device = device;
    this.tokens = new TokenSource(token);
    this.store = store;
    this.ackEvery = ackEvery;
    this.ackAfterMs = ackAfterMs;
    this.backoff = new Backoff({ random, ...backoff });
    this.WebSocket = WebSocketImpl ?? globalThis.WebSocket;
    this.newId = idGenerator ?? randomId;
    this.http = new HttpApi({ baseUrl: this.baseUrl, user, device, tokens: this.tokens, fetch: fetchImpl });
    this.listeners = { entry: [], status: [], error: [], resync: [] };
    /** @type {import('./stores.js').ClientState} */
    this.state = null;
    this.ws = null;
    this.status = 'idle';
    this.stopped = false;
    this.refreshToken = false;
    this.chain = Promise.resolve();
    this.conn = null; // per socket: { ws, cursor, unacked, timer }
    this.pendingSends = new Map(); // clientMsgId -> { frame, resolve, reject, sentOn }
    this.reconnectTimer = null;
    /** Origin of the gateway instance a `redirect` named (null: `baseUrl`); the HTTP API stays on `baseUrl`. */
    this.socketOrigin = null;
    /** Redirects since the last socket that delivered its backlog: only the first is followed without backoff. */
    this.redirects = 0;
    /** Counters for dashboards and tests: entries handed over, redeliveries dropped, sockets opened. */
    this.stats = { entries: 0, duplicates: 0, sockets: 0 };
  }

  /**
   * Listens to `entry` ((entry, cursor) => void | Promise), `status` ((status, detail) => void), `error`
   * ((ImError | Error) => void) or `resync` ((frame) => void). Returns a function that removes the listener.
   */
  on(type, fn) {
    this.listeners[type].push(fn);
    return () => {
      this.listeners[type] = this.listeners[type].filter((f) => f !== fn);
    };
  }

  /** Opens the connection (and keeps it open); resolves once the first socket is open. */
  async connect() {
    if (!this.state) {
      this.state = await this.store.load();
    }
    this.stopped = false;
    return new Promise((resolve, reject) => {
      const off = this.on('status', (s, detail) => {
        if (s === 'online') {
          off();
          resolve();
        } else if (s === 'replaced' || s === 'closed') {
          off();
          reject(new ImError(detail?.code ?? 0, `connection ${s}`));
        }
      });
      this.#open();
    });
  }

  /** Closes the connection for good (no reconnect); pending sends are rejected. */
  close() {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    if (this.ws) {
      this.ws.close(1000, 'client closed');
    }
    for (const [, p] of this.pendingSends) {
      p.reject(new ImError(0, 'client closed'));
    }
    this.pendingSends.clear();
    this.#status('closed');
  }

  /**
   * The entries as an async iterator: each one is ACKable once the loop asks for the next one (or leaves).
   * @returns {AsyncGenerator<object>}
   */
  async *entries() {
    const queue = [];
    let wake = null;
    let finished = false;
    const notify = () => {
      if (wake) {
        wake();
        wake = null;
      }
    };
    const offEntry = this.on('entry', (entry) => new Promise((done) => {
      queue.push({ entry, done });
      notify();
    }));
    const offStatus = this.on('status', (s) => {
      if (s === 'closed' || s === 'replaced') {
        finished = true;
        notify();
      }
    });
    try {
      for (;;) {
        while (!queue.length) {
          if (finished) {
            return;
          }
          await new Promise((r) => { wake = r; });
        }
        const { entry, done } = queue.shift();
        try {
          yield entry;
        } finally {
          done();
        }
      }
    } finally {
      offEntry();
      offStatus();
      queue.forEach((q) => q.done());
    }
  }

  /**
   * Sends a message over the socket (`{to}` or `{groupId}`, `body`, optional `deliverAt`, `clientMsgId`).
   * A `clientMsgId` is generated when absent and kept for every retry (after a reconnect, or a 429 of the socket's
   * in-flight bound), so the server delivers it once. Resolves with the `sent` frame; rejects with an ImError on
   * any other refusal.
   */
  send(message) {
    const frame = { ...message, type: 'send', clientMsgId: message.clientMsgId ?? this.newId() };
    return new Promise((resolve, reject) => {
      this.pendingSends.set(frame.clientMsgId, { frame, resolve, reject, sentOn: null, retryTimer: null });
      this.#flushSends();
    });
  }

  /**
   * Browsers: notifications for this device (service worker, permission, Web Push subscription, registered with
   * the server). Call it from a click handler; see push.js.
   * @param {{serviceWorkerUrl: string, scope?: string}} options
   */
  enableNotifications(options) {
    return enableNotifications(this.http, options);
  }

  /** Browsers: no more notifications for this device; resolves with whether the server had a registration. */
  disableNotifications(options) {
    return disableNotifications(this.http, options);
  }

  #status(status, detail) {
    this.status = status;
    for (const fn of this.listeners.status) {
      fn(status, detail);
    }
  }

  #fail(error) {
    for (const fn of this.listeners.error) {
      fn(error);
    }
  }

  async #open() {
    if (this.stopped) {
      return;
    }
    this.#status('connecting');
    let token;
    try {
      token = await this.tokens.get(this.refreshToken);
      this.refreshToken = false;
    } catch (e) {
      this.#fail(e);
      this.#scheduleReconnect();
      return;
    }
    if (this.stopped) {
      return;
    }
    // The device's own cursor (saved before each ACK): the gateway resumes after it, not after the committed one,
    // so an ACK lost with the socket brings nothing again, and a device resumes exactly across an inbox grow.
    const resume = this.state?.cursor ? `&cursor=${encodeURIComponent(this.state.cursor)}` : '';
    const url = (this.socketOrigin ?? this.baseUrl).replace(/^http/, 'ws') + `/v1/ws?device=${encodeURIComponent(this.device)}`
      + `&access_token=${encodeURIComponent(token)}${resume}`;
    const ws = new this.WebSocket(url);
    const conn = { ws, opened: false, cursor: null, acked: null, unacked: 0, timer: null };
    this.ws = ws;
    this.conn = conn;
    ws.onopen = () => {
      conn.opened = true;
      this.stats.sockets++;
      this.#status('online');
      this.#flushSends();
    };
    ws.onmessage = (ev) => {
      let frame;
      try {
        frame = JSON.parse(ev.data);
      } catch {
        return; // not JSON: the protocol is JSON text; nothing to do with it
      }
      this.chain = this.chain.then(() => this.#frame(frame, conn)).catch((e) => this.#fail(e));
    };
    ws.onerror = () => {}; // the close that follows says what happened
    ws.onclose = (ev) => this.#closed(conn, ev.code, ev.reason);
  }

  #closed(conn, code, reason) {
    clearTimeout(conn.timer);
    conn.closed = true;
    if (this.conn !== conn) {
      return;
    }
    this.ws = null;
    for (const p of this.pendingSends.values()) {
      if (p.sentOn === conn) {
        p.sentOn = null; // sent again, same clientMsgId, on the next socket
      }
    }
    if (this.stopped) {
      return;
    }
    if (code === REPLACED) {
      // A newer socket of this user replaced this one: reconnecting would close that one in turn.
      this.stopped = true;
      this.#status('replaced', { code, reason });
      return;
    }
    // 4001: the token was refused or expired. A socket that never opened was most likely refused at the upgrade
    // (401: browsers only see 1006), so ask for a fresh token then too.
    if (code === TOKEN_REFUSED || !conn.opened) {
      this.refreshToken = true;
    }
    this.#status('offline', { code, reason });
    if (code !== MOVED) {
      this.socketOrigin = null; // a lost instance: start again where the application pointed the client
    }
    const moved = code === MOVED && this.redirects++ === 0;
    this.#scheduleReconnect(code === RESYNC || moved ? 0 : undefined);
  }

  #scheduleReconnect(delay) {
    const ms = delay ?? this.backoff.next();
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => this.#open(), ms);
  }

  async #frame(frame, conn) {
    if (conn.failed) {
      return;
    }
    switch (frame.type) {
      case 'entry':
        await this.#entry(frame.entry, frame.cursor, conn);
        break;
      case 'synced':
        this.backoff.reset();
        this.redirects = 0;
        this.#status('synced', { cursor: frame.cursor });
        break;
      case 'sent':
        this.#answer(frame.clientMsgId, (p) => p.resolve(frame));
        break;
      case 'error':
        this.#sendError(frame);
        break;
      case 'redirect':
        // Another instance reads this user's partition (IM_PUSH_READ=owned); the socket closes next (4013). Without
        // a url (the owner is moving) the client reconnects where the application pointed it.
        this.socketOrigin = frame.url ? new URL(frame.url).origin : null;
        break;
      case 'resync':
        // The device fell behind; the socket closes next (4008) and the reconnect resumes from the cursor.
        for (const fn of this.listeners.resync) {
          fn(frame);
        }
        break;
      default:
        // unknown frame types are ignored (the protocol may add some)
    }
  }

  async #entry(entry, cursor, conn) {
    const source = entry.source ?? '';
    const mark = this.state.marks[source];
    if (mark === undefined || entry.seq > mark) {
      try {
        for (const fn of this.listeners.entry) {
          await fn(entry, cursor);
        }
      } catch (e) {
        // The application could not take it: not ACKed, so it comes again after a reconnect.
        // Later frames of this socket are skipped too (they would leave a gap); the next socket resumes here.
        conn.failed = true;
        this.#fail(e);
        if (conn.ws.readyState === OPEN) {
          conn.ws.close(4000, 'entry handler failed');
        }
        return;
      }
      this.state.marks[source] = entry.seq;
      this.stats.entries++;
    } else {
      this.stats.duplicates++;
    }
    if (conn.closed) {
      return; // this socket is gone: the next one resumes from the committed cursor
    }
    conn.cursor = cursor;
    conn.unacked++;
    if (conn.unacked >= this.ackEvery) {
      await this.#ack(conn);
    } else if (!conn.timer) {
      conn.timer = setTimeout(() => {
        conn.timer = null;
        this.chain = this.chain.then(() => this.#ack(conn)).catch((e) => this.#fail(e));
      }, this.ackAfterMs);
    }
  }

  /** Saves the state, then ACKs (cumulative) the newest cursor this socket handled. */
  async #ack(conn) {
    clearTimeout(conn.timer);
    conn.timer = null;
    if (!conn.unacked || conn.closed || conn.ws.readyState !== OPEN) {
      return;
    }
    const cursor = conn.cursor;
    this.state.cursor = cursor;
    await this.store.save(this.state);
    if (!conn.closed && conn.ws.readyState === OPEN) {
      conn.ws.send(JSON.stringify({ type: 'ack', cursor }));
      conn.unacked = 0;
    }
  }

  #flushSends() {
    const conn = this.conn;
    if (!conn || conn.closed || !conn.opened || conn.ws.readyState !== OPEN) {
      return;
    }
    for (const p of this.pendingSends.values()) {
      if (p.sentOn !== conn && !p.retryTimer) {
        p.sentOn = conn;
        conn.ws.send(JSON.stringify(p.frame));
      }
    }
  }

  #answer(clientMsgId, fn) {
    const p = this.pendingSends.get(clientMsgId);
    if (p) {
      this.pendingSends.delete(clientMsgId);
      clearTimeout(p.retryTimer);
      fn(p);
    }
  }

  #sendError(frame) {
    const p = frame.clientMsgId ? this.pendingSends.get(frame.clientMsgId) : null;
    if (!p) {
      this.#fail(new ImError(frame.status ?? 0, frame.error));
      return;
    }
    if (frame.status === 429) {
      // Over the socket's in-flight sends or the user's quota: the same frame again, later.
      p.sentOn = null;
      p.retryTimer = setTimeout(() => {
        p.retryTimer = null;
        this.#flushSends();
      }, this.backoff.cap() * (0.5 + this.backoff.random() / 2));
      return;
    }
    this.#answer(frame.clientMsgId, (q) => q.reject(new ImError(frame.status ?? 0, frame.error)));
  }
}
