// The HTTP API as one signed-in user: every call carries the bearer token; a 401 asks the token provider for a new
// token once and repeats the call; any other refusal is thrown as an ImError with the server's status and reason.

/** A refusal by the server (`status` = HTTP status, `error` = the reason of its `{"error"}` body). */
export class ImError extends Error {
  /**
   * @param {number} status HTTP status, or 0 when there was no answer (network, closed client)
   * @param {string} error the reason
   * @param {number|null} [retryAfterMs] from `Retry-After`, when the server said how long to wait
   */
  constructor(status, error, retryAfterMs = null) {
    super(status ? `${status}: ${error}` : error);
    this.name = 'ImError';
    this.status = status;
    this.error = error;
    this.retryAfterMs = retryAfterMs;
  }
}

/** Resolves the token of a provider that is a string or a function ({refresh}) => token. */
export class TokenSource {
  /** @param {string | ((o: {refresh: boolean}) => string | Promise<string>)} provider */
  constructor(provider) {
    this.provider = provider;
    this.current = null;
  }

  /** The token, asking the provider for a new one when `refresh` (after a 401 / close 4001) or none is held. */
  async get(refresh = false) {
    if (refresh || this.current === null) {
      this.current = typeof this.provider === 'function'
        ? await this.provider({ refresh }) : this.provider;
    }
    return this.current;
  }
}

const enc = encodeURIComponent;

/** The `/v1` routes of the HTTP API, with typed results (see index.d.ts) and ImError on a refusal. */
export class HttpApi {
  /**
   * @param {{baseUrl: string, user: string, device?: string, tokens: TokenSource, fetch?: typeof fetch}} options
   */
  constructor({ baseUrl, user, device, tokens, fetch: fetchImpl }) {
    this.baseUrl = baseUrl.replace(/\/$/, '');
    this.user = user;
    this.device = device;
    this.tokens = tokens;
    this.fetch = fetchImpl ?? ((...a) => globalThis.fetch(...a));
  }

  /** One call; 401 refreshes the token and repeats once. */
  async request(method, path, body) {
    for (let attempt = 0; ; attempt++) {
      const token = await this.tokens.get(attempt > 0);
      let r;
      try {
        r = await this.fetch(this.baseUrl + path, {
          method,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (e) {
        throw new ImError(0, `no answer: ${e.message}`);
      }
      if (r.status === 401 && attempt === 0) {
        continue;
      }
      if (!r.ok) {
        throw await errorOf(r);
      }
      const text = await r.text();
      return text ? JSON.parse(text) : null;
    }
  }

  /** Entries after this device's committed cursor: `{entries, next, hasMore, cursor?, largeGroups?}`. */
  sync({ limit = 100 } = {}) {
    return this.request('GET', `/v1/users/${enc(this.user)}/devices/${enc(this.device)}/sync?limit=${limit}`);
  }

  /** Commits this device's cursor (`{cursor}` opaque, or `{seq}`); cursors only move forward. */
  commit(position) {
    return this.request('PUT', `/v1/users/${enc(this.user)}/devices/${enc(this.device)}/cursor`, position);
  }

  /** The user's inbox after `after`. */
  inbox({ after = -1, limit = 100 } = {}) {
    return this.request('GET', `/v1/users/${enc(this.user)}/inbox?after=${after}&limit=${limit}`);
  }

  /** A conversation's history, newest first; `before` = the previous page's `next`. */
  history(conversationId, { before, limit = 20 } = {}) {
    const b = before === undefined || before === null ? '' : `&before=${before}`;
    return this.request('GET', `/v1/conversations/${enc(conversationId)}/messages?limit=${limit}${b}`);
  }

  /** One page of the user's conversation list; `after` = the previous page's `next`. */
  conversations({ after, limit = 50 } = {}) {
    const a = after ? `&after=${enc(after)}` : '';
    return this.request('GET', `/v1/users/${enc(this.user)}/conversations?limit=${limit}${a}`);
  }

  /** Every page of the conversation list. */
  async allConversations({ limit = 200 } = {}) {
    const all = [];
    let after;
    do {
      const page = await this.conversations({ after, limit });
      all.push(...page.conversations);
      after = page.next;
    } while (after);
    return all;
  }

  /** Mute / pin: `{muted?, pinned?}`. */
  settings(conversationId, flags) {
    return this.request('PUT',
      `/v1/users/${enc(this.user)}/conversations/${enc(conversationId)}/settings`, flags);
  }

  /** POST /v1/messages (the socket's `send` is ImClient#send). */
  postMessage(message) {
    return this.request('POST', '/v1/messages', message);
  }

  /** A read marker: target is `{to}` or `{groupId}`. */
  read(target, upToSeq) {
    return this.request('POST', '/v1/read', { ...target, upToSeq });
  }

  recall(target, messageId) {
    return this.request('POST', '/v1/recall', { ...target, messageId });
  }

  join(groupId, userId = this.user) {
    return this.request('PUT', `/v1/groups/${enc(groupId)}/members/${enc(userId)}`);
  }

  leave(groupId, userId = this.user) {
    return this.request('DELETE', `/v1/groups/${enc(groupId)}/members/${enc(userId)}`);
  }

  /** `GET /v1/push/config`: `{vapidPublicKey, providers}`, what a device needs to subscribe to notifications. */
  pushConfig() {
    return this.request('GET', '/v1/push/config');
  }

  /**
   * Registers a notification channel for a device (default: this client's): `{provider: 'webpush', subscription}`
   * (a PushSubscription's JSON), `{provider: 'fcm', token}`, `{provider: 'apns', token, sandbox?}`. Resolves when
   * the server took it (202); a Web Push endpoint outside the server's allow-list is an ImError 400.
   */
  async registerPush(deviceId, registration) {
    if (registration === undefined && typeof deviceId === 'object') {
      return this.registerPush(undefined, deviceId); // registerPush(registration): this client's device
    }
    return this.request('PUT', this.#pushPath(deviceId), registration);
  }

  /** The device's registration, secrets redacted; an ImError 404 when it has none. */
  async pushRegistration(deviceId) {
    return this.request('GET', this.#pushPath(deviceId));
  }

  /** Removes the device's registration (204); an ImError 404 when it had none. */
  async unregisterPush(deviceId) {
    return this.request('DELETE', this.#pushPath(deviceId));
  }

  #pushPath(deviceId = this.device) {
    if (!deviceId) {
      throw new TypeError('a device id is needed (none given, and the client has none)');
    }
    return `/v1/users/${enc(this.user)}/devices/${enc(deviceId)}/push`;
  }

  /** Local mode only (`IM_AUTH_DEV_TOKENS=true`): a token for any user and device. */
  static async devToken(baseUrl, user, device, fetchImpl = globalThis.fetch) {
    const r = await fetchImpl(baseUrl.replace(/\/$/, '') + '/dev/token', {
      method: 'POST', body: JSON.stringify({ user, device }),
    });
    if (r.status === 404) {
      throw new ImError(404, 'dev tokens are off (IM_AUTH_DEV_TOKENS)');
    }
    if (!r.ok) {
      throw await errorOf(r);
    }
    return (await r.json()).token;
  }
}

async function errorOf(r) {
  const retry = Number(r.headers?.get?.('Retry-After'));
  const retryAfterMs = Number.isFinite(retry) && retry > 0 ? retry * 1000 : null;
  let reason = `HTTP ${r.status}`;
  try {
    reason = (await r.json()).error || reason;
  } catch {
    // not JSON: keep the status line
  }
  return new ImError(r.status, reason, retryAfterMs);
}
