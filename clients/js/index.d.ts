// Type declarations of @impipe/client (hand-written; the sources are plain ES modules with JSDoc).

/** One sync entry, as `GET .../sync` and the `entry` frame carry it. */
export interface Entry {
  /** Position in its source: the inbox seq, or the large group's timeline seq. */
  seq: number;
  /** `"inbox"` for the user's inbox, or `"#groupId"` for a large group's timeline. */
  source: string;
  type: 'MESSAGE' | 'READ' | 'RECALL' | 'REJECTED' | 'CONVERSATION_SETTINGS' | 'CONVERSATION_JOINED'
    | 'CONVERSATION_LEFT' | string;
  conversationId: string;
  conversationSeq?: number;
  messageId?: string;
  senderId?: string;
  body?: string | null;
  refMessageId?: string | null;
  readUpToSeq?: number | null;
  timestamp?: number;
  [field: string]: unknown;
}

/**
 * What a client keeps between runs: the last ACKed cursor (sent as `?cursor=` on every connect: the gateway resumes
 * after it) and, per source, the highest seq handled.
 */
export interface ClientState {
  cursor: string | null;
  marks: Record<string, number>;
}

/** Where the state is kept; saved before every ACK, loaded once by `connect()`. */
export interface CursorStore {
  load(): Promise<ClientState>;
  save(state: ClientState): Promise<void>;
}

export type TokenProvider = string | ((options: { refresh: boolean }) => string | Promise<string>);

export interface ClientOptions {
  /** `http(s)://host:port` of the gateway; in a browser the page's origin by default. */
  baseUrl?: string;
  /** The signed-in user (for the HTTP routes that name the user). */
  user?: string;
  /** The device id (`?device=`). */
  device: string;
  /** A token, or a provider asked again with `refresh: true` after close 4001, a refused upgrade or a 401. */
  token: TokenProvider;
  /** Default: MemoryStore. In browsers IndexedDbStore keeps it across reloads. */
  store?: CursorStore;
  /** ACK after this many handled entries (default 50) ... */
  ackEvery?: number;
  /** ... or this many ms after the first unACKed one (default 200). */
  ackAfterMs?: number;
  /** Reconnect delays: full jitter below initialMs * 2^attempt, at most maxMs (defaults 500, 10000). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A WebSocket implementation (default the global one; Node 20 needs --experimental-websocket or a library). */
  WebSocket?: unknown;
  /** A fetch implementation (default the global one). */
  fetch?: typeof fetch;
  /** Random numbers in [0, 1) for the jitter (default Math.random). */
  random?: () => number;
  /** clientMsgId generator (default crypto.randomUUID). */
  idGenerator?: () => string;
}

export type Status = 'idle' | 'connecting' | 'online' | 'synced' | 'offline' | 'replaced' | 'closed';

export interface StatusDetail {
  /** The close code for `offline` and `replaced`. */
  code?: number;
  reason?: string;
  /** For `synced`: the position after the backlog. */
  cursor?: string;
}

export interface OutgoingMessage {
  to?: string;
  groupId?: string;
  body: string;
  /** Generated when absent; every retry of this send carries the same one. */
  clientMsgId?: string;
  /** ISO-8601: schedule it. */
  deliverAt?: string;
}

export interface SentFrame {
  type: 'sent';
  clientMsgId: string;
  messageId: string;
  conversationId: string;
  scheduled: boolean;
}

export interface ResyncFrame {
  type: 'resync';
  reason: string;
  cursor: string;
}

/** A refusal: `status` is the HTTP status (0: no answer), `error` the server's reason. */
export class ImError extends Error {
  constructor(status: number, error: string, retryAfterMs?: number | null);
  readonly status: number;
  readonly error: string;
  /** From `Retry-After`, when the server sent one. */
  readonly retryAfterMs: number | null;
}

export class ImClient {
  constructor(options: ClientOptions);
  readonly status: Status;
  readonly http: HttpApi;
  readonly backoff: Backoff;
  /** Entries handed to the application, redeliveries dropped (source + seq already handled), sockets opened. */
  readonly stats: { entries: number; duplicates: number; sockets: number };
  /** Loads the store and opens the socket (kept open: reconnects with backoff); resolves when the first is open. */
  connect(): Promise<void>;
  /** Closes for good; pending sends reject with ImError(0, 'client closed'). */
  close(): void;
  /** Entries in order, once each; an entry is ACKed after the handler's promise resolves. */
  on(type: 'entry', fn: (entry: Entry, cursor: string) => void | Promise<void>): () => void;
  on(type: 'status', fn: (status: Status, detail?: StatusDetail) => void): () => void;
  on(type: 'error', fn: (error: Error) => void): () => void;
  on(type: 'resync', fn: (frame: ResyncFrame) => void): () => void;
  /** The entries as an async iterator (an entry is ACKable once the loop asks for the next one). */
  entries(): AsyncGenerator<Entry, void, undefined>;
  /** Sends over the socket; resolves with the `sent` frame, rejects with ImError on a refusal other than 429. */
  send(message: OutgoingMessage): Promise<SentFrame>;
  /** Browsers: notifications for this device (see `enableNotifications`); call it from a click handler. */
  enableNotifications(options: NotificationOptions): Promise<NotificationsOn>;
  /** Browsers: no more notifications for this device; resolves with whether the server had a registration. */
  disableNotifications(options?: Partial<NotificationOptions>): Promise<boolean>;
}

/** `GET /v1/push/config`. */
export interface PushConfig {
  /** The server's VAPID public key: an uncompressed P-256 point (65 bytes), base64url. */
  vapidPublicKey: string | null;
  providers: Array<'webpush' | 'fcm' | 'apns' | 'webhook' | string>;
}

/** A browser's PushSubscription as JSON (`subscription.toJSON()`). */
export interface WebPushSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** What a device registers with `PUT .../devices/{deviceId}/push`. */
export type PushRegistration =
  | { provider: 'webpush'; subscription: WebPushSubscription }
  | { provider: 'fcm'; token: string }
  | { provider: 'apns'; token: string; sandbox?: boolean };

/** What a push message's data holds (the service worker's `event.data.json()`). */
export interface NotificationPayload {
  notificationId: string;
  conversationId: string;
  conversationType: 'DIRECT' | 'GROUP' | string;
  senderId: string;
  /** The newest message's first characters; absent when the server sends no previews. */
  preview?: string | null;
  /** The conversation seq of the newest message covered. */
  seq: number;
  /** How many messages this notification covers. */
  count: number;
  unreadTotal?: number | null;
}

export interface NotificationOptions {
  /** The service worker script, e.g. `/sw.js` (it must show the notifications: browsers require it). */
  serviceWorkerUrl: string;
  /** The worker's scope (default: the script's directory). */
  scope?: string;
  /** The device to register (default: the client's). */
  deviceId?: string;
  /** The browser globals (default `globalThis`): tests pass fakes. */
  env?: object;
}

export interface NotificationsOn {
  subscription: PushSubscription;
  registration: ServiceWorkerRegistration;
}

/** Why notifications could not be turned on. */
export class NotificationError extends Error {
  constructor(reason: NotificationError['reason'], message: string);
  /**
   * `unsupported`: no service worker / Push API / Notification (or the worker failed to install); `denied`: the
   * site is blocked; `dismissed`: the prompt was closed without an answer; `unavailable`: the server has no Web Push.
   */
  readonly reason: 'unsupported' | 'denied' | 'dismissed' | 'unavailable';
}

/** Where a page can receive Web Push (a service worker, PushManager and Notification). */
export function notificationsSupported(env?: object): boolean;

/** base64url (padded or not) to bytes; a TypeError for anything else. */
export function base64UrlToBytes(text: string): Uint8Array;

/**
 * Registers the service worker, asks permission, subscribes with the server's VAPID key (reusing a subscription to
 * the same key) and registers the subscription for the device. Rejects with NotificationError or ImError.
 */
export function enableNotifications(http: HttpApi, options: NotificationOptions): Promise<NotificationsOn>;

/** Unregisters the device (none is fine) and cancels the browser's subscription. */
export function disableNotifications(http: HttpApi, options?: Partial<NotificationOptions>): Promise<boolean>;

export interface Page<T> {
  entries: T[];
  next: number | string | null;
  hasMore: boolean;
  [field: string]: unknown;
}

export interface ConversationItem {
  conversationId: string;
  type: 'DIRECT' | 'GROUP' | string;
  peerId?: string | null;
  member: boolean;
  last: { conversationSeq: number; messageId: string; senderId: string; type: string; body: string | null;
    timestamp: number } | null;
  unread: number;
  readUpToSeq: number;
  muted: boolean;
  pinned: boolean;
  updatedAt: number;
}

export interface ConversationPage {
  userId: string;
  conversations: ConversationItem[];
  unreadTotal: number;
  next: string | null;
}

export type Target = { to: string } | { groupId: string };

export class HttpApi {
  constructor(options: { baseUrl: string; user: string; device?: string; tokens: TokenSource;
    fetch?: typeof fetch });
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  sync(options?: { limit?: number }): Promise<Page<Entry>>;
  commit(position: { cursor: string } | { seq: number }): Promise<unknown>;
  inbox(options?: { after?: number; limit?: number }): Promise<Page<Entry>>;
  history(conversationId: string, options?: { before?: number; limit?: number }): Promise<Page<Entry>>;
  conversations(options?: { after?: string; limit?: number }): Promise<ConversationPage>;
  allConversations(options?: { limit?: number }): Promise<ConversationItem[]>;
  settings(conversationId: string, flags: { muted?: boolean; pinned?: boolean }): Promise<unknown>;
  postMessage(message: OutgoingMessage & { senderDeviceId?: string }): Promise<{ messageId: string;
    conversationId: string; scheduled: boolean }>;
  read(target: Target, upToSeq: number): Promise<unknown>;
  recall(target: Target, messageId: string): Promise<unknown>;
  join(groupId: string, userId?: string): Promise<unknown>;
  leave(groupId: string, userId?: string): Promise<unknown>;
  pushConfig(): Promise<PushConfig>;
  /** 202 when taken; ImError 400 for a Web Push endpoint outside the server's allow-list. */
  registerPush(registration: PushRegistration): Promise<unknown>;
  registerPush(deviceId: string | undefined, registration: PushRegistration): Promise<unknown>;
  /** The device's registration, secrets redacted; ImError 404 when it has none. */
  pushRegistration(deviceId?: string): Promise<{ provider: string; [field: string]: unknown }>;
  /** ImError 404 when the device had none. */
  unregisterPush(deviceId?: string): Promise<null>;
  static devToken(baseUrl: string, user: string, device: string, fetch?: typeof globalThis.fetch):
    Promise<string>;
}

export class TokenSource {
  constructor(provider: TokenProvider);
  get(refresh?: boolean): Promise<string>;
}

export class MemoryStore implements CursorStore {
  load(): Promise<ClientState>;
  save(state: ClientState): Promise<void>;
}

export class IndexedDbStore implements CursorStore {
  constructor(key: string, options?: { dbName?: string; indexedDB?: unknown });
  load(): Promise<ClientState>;
  save(state: ClientState): Promise<void>;
}

export class Backoff {
  constructor(options?: { initialMs?: number; maxMs?: number; random?: () => number });
  attempt: number;
  cap(): number;
  next(): number;
  reset(): void;
}
