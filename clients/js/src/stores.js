// Where a client keeps what it has processed: the last cursor it ACKed and, per source (the inbox, "#group"
// timelines), the highest seq it handed to the application. Within one source seqs only grow, so "seq <= mark" is an
// exact and bounded duplicate test: entries received but not yet ACKed come again after a reconnect (or after the app
// restarts) and are dropped. The client saves the state before every ACK, so a restarted app resumes without
// handing an entry to the application twice.

/** @typedef {{cursor: string|null, marks: Record<string, number>}} ClientState */

/** Keeps the state in memory (the default): an app restart starts from the server's committed cursor. */
export class MemoryStore {
  constructor() {
    /** @type {ClientState} */
    this.state = { cursor: null, marks: {} };
  }

  /** @returns {Promise<ClientState>} */
  async load() {
    return { cursor: this.state.cursor, marks: { ...this.state.marks } };
  }

  /** @param {ClientState} state */
  async save(state) {
    this.state = { cursor: state.cursor, marks: { ...state.marks } };
  }
}

/** Keeps the state in the browser's IndexedDB, one record per key (e.g. user + device). */
export class IndexedDbStore {
  /**
   * @param {string} key the record's key, e.g. `${user}/${device}`
   * @param {{dbName?: string, indexedDB?: IDBFactory}} [options]
   */
  constructor(key, { dbName = 'impipe-client', indexedDB = globalThis.indexedDB } = {}) {
    this.key = key;
    this.dbName = dbName;
    this.idb = indexedDB;
    this.db = null;
  }

  async open() {
    if (!this.db) {
      this.db = await new Promise((resolve, reject) => {
        const req = this.idb.open(this.dbName, 1);
        req.onupgradeneeded = () => req.result.createObjectStore('state');
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      });
    }
    return this.db;
  }

  /** @returns {Promise<ClientState>} */
  async load() {
    const db = await this.open();
    const value = await request(db.transaction('state').objectStore('state').get(this.key));
    return value ? { cursor: value.cursor ?? null, marks: { ...value.marks } } : { cursor: null, marks: {} };
  }

  /** @param {ClientState} state */
  async save(state) {
    const db = await this.open();
    const tx = db.transaction('state', 'readwrite');
    tx.objectStore('state').put({ cursor: state.cursor, marks: { ...state.marks } }, this.key);
    await new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
    });
  }
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}
