// Reconnect delays: exponential with full jitter (a random delay between 0 and the exponential cap), so devices
// cut off together by a gateway restart do not come back together. Reset only once a connection has delivered its
// backlog ("synced"), not when a socket merely opens: a socket that opens and is closed at once keeps backing off
// instead of looping.

/** Exponential backoff with full jitter. */
export class Backoff {
  /**
   * @param {{initialMs?: number, maxMs?: number, random?: () => number}} [options]
   */
  constructor({ initialMs = 500, maxMs = 10_000, random = Math.random } = {}) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.random = random;
    this.attempt = 0;
  }

  /** The cap of the next delay: initialMs * 2^attempt, at most maxMs. */
  cap() {
    return Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 30));
  }

  /** The next delay in ms (a random share of the cap); each call raises the cap. */
  next() {
    const delay = Math.floor(this.random() * this.cap());
    this.attempt++;
    return delay;
  }

  reset() {
    this.attempt = 0;
  }
}
