// The device connection: GET /v1/ws with ?access_token= (browsers cannot set headers on an upgrade).
// Every entry is ACKed with its cursor once shown; after a close it reconnects with backoff (except 4012: replaced
// by a newer socket of the same user) and the gateway
// resumes after the last ACK. Entries are deduplicated by (source, seq), so an entry pushed again after a
// reconnect (received but not yet ACKed) is shown once.
export class Connection {
  constructor(token, device, handlers) {
    this.token = token;
    this.device = device;
    this.handlers = handlers; // { entry(e), status(s), sent(frame), error(frame) }
    this.seen = new Set();
    this.backoff = 500;
    this.stopped = false;
  }

  open() {
    const proto = location.protocol === 'https:' ? 'wss' : 'ws';
    const url = `${proto}://${location.host}/v1/ws?device=${encodeURIComponent(this.device)}`
      + `&access_token=${encodeURIComponent(this.token)}`;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => { this.backoff = 500; this.handlers.status('online'); };
    ws.onmessage = (ev) => this.frame(JSON.parse(ev.data));
    ws.onclose = (ev) => {
      this.handlers.status(`offline (${ev.code}${ev.reason ? ': ' + ev.reason : ''})`);
      // 4012: this user opened more sockets than the gateway allows and this one was the oldest: reconnecting
      // would close another of the user's tabs in turn, so this one stays closed until the page is reloaded.
      if (!this.stopped && ev.code !== 4012) {
        setTimeout(() => this.open(), this.backoff);
        this.backoff = Math.min(this.backoff * 2, 10000);
      }
    };
  }

  frame(f) {
    if (f.type === 'entry') {
      const key = `${f.entry.source}:${f.entry.seq}`;
      if (!this.seen.has(key)) {
        this.seen.add(key);
        this.handlers.entry(f.entry);
      }
      this.send({ type: 'ack', cursor: f.cursor });
    } else if (f.type === 'sent') {
      this.handlers.sent(f);
    } else if (f.type === 'error') {
      this.handlers.error(f);
    }
    // 'resync': the socket closes next; the reconnect resumes from the cursor.
  }

  send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(frame));
      return true;
    }
    return false;
  }

  close() {
    this.stopped = true;
    if (this.ws) this.ws.close();
  }
}
