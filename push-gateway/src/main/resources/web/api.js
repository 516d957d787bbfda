// The HTTP API, as the signed-in user: every call carries the bearer token.
export class Api {
  constructor(token) { this.token = token; }

  static async devToken(user, device) {
    const r = await fetch('/dev/token', { method: 'POST', body: JSON.stringify({ user, device }) });
    if (!r.ok) throw new Error(r.status === 404 ? 'dev tokens are off (IM_AUTH_DEV_TOKENS)' : await errorOf(r));
    return (await r.json()).token;
  }

  async call(method, path, body) {
    const r = await fetch(path, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!r.ok) throw new Error(await errorOf(r));
    return r.status === 204 || r.headers.get('Content-Length') === '0' ? null : r.json();
  }

  conversations(user, after) {
    const a = after ? `&after=${enc(after)}` : '';
    return this.call('GET', `/v1/users/${enc(user)}/conversations?limit=200${a}`);
  }
  settings(user, conversation, flags) {
    return this.call('PUT', `/v1/users/${enc(user)}/conversations/${enc(conversation)}/settings`, flags);
  }
  inbox(user, after = -1) { return this.call('GET', `/v1/users/${enc(user)}/inbox?after=${after}&limit=1000`); }
  history(conversation, before) {
    const b = before === undefined ? '' : `&before=${before}`;
    return this.call('GET', `/v1/conversations/${enc(conversation)}/messages?limit=20${b}`);
  }
  read(target, upToSeq) { return this.call('POST', '/v1/read', { ...target, upToSeq }); }
  recall(target, messageId) { return this.call('POST', '/v1/recall', { ...target, messageId }); }
  join(group, user) { return this.call('PUT', `/v1/groups/${enc(group)}/members/${enc(user)}`); }
  leave(group, user) { return this.call('DELETE', `/v1/groups/${enc(group)}/members/${enc(user)}`); }
}

const enc = encodeURIComponent;

async function errorOf(r) {
  try { return (await r.json()).error || `HTTP ${r.status}`; } catch { return `HTTP ${r.status}`; }
}
