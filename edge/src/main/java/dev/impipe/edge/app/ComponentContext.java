package dev.impipe.edge.app;

import dev.impipe.edge.http.HttpApi;

/**
 * The context of a process with an HTTP edge: the runtime's ({@link dev.impipe.runtime.app.ComponentContext}) plus
 * the HTTP API that components add routes to.
 */
public interface ComponentContext extends dev.impipe.runtime.app.ComponentContext {

  /** The HTTP API to add routes to. */
  HttpApi http();
}
