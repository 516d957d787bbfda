package dev.impipe.edge.http;

/** Where a route's handler runs, and whether it needs a token. */
enum RouteKind {
  /** On the bounded worker pool; a token under the authenticated prefix. */
  WORKER,
  /** On a thread of its own, never queued behind application work; no token. */
  SYSTEM,
  /** On the event loop itself (in-memory probes); no token. */
  PROBE
}
