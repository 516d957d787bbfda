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

/** What a client keeps between runs: the last ACKed cursor and, per source, the highest seq handled. */
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
}

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
