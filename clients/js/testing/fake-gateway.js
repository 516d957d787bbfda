// A gateway in memory that speaks the device protocol to an injected WebSocket class: a log of entries with cursors
// "c<n>" (the position after the n-th entry), a committed cursor moved by ACKs, a backlog after it on every
// connection followed by "synced", and hooks to close sockets the ways the real gateway does.

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
    const gateway = this;
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
    for (let i = this.committed; i < this.log.length; i++) {
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
