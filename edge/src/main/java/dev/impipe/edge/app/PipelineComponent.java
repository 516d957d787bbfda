package dev.impipe.edge.app;

/**
 * A component that serves HTTP routes: it starts with the edge's {@link ComponentContext} (which has the HTTP API).
 * It is found by {@link java.util.ServiceLoader} as a {@link dev.impipe.runtime.app.PipelineComponent}, like every
 * other component; {@link PipelineRuntime} runs both kinds.
 */
public interface PipelineComponent extends dev.impipe.runtime.app.PipelineComponent {

  /** Starts the component; resources it opens are registered with {@link ComponentContext#closeOnShutdown}. */
  void start(ComponentContext context) throws Exception;

  /** Refuses a context without an HTTP edge: this component has routes to add. */
  @Override
  default void start(dev.impipe.runtime.app.ComponentContext context) throws Exception {
    if (!(context instanceof ComponentContext edge)) {
      throw new IllegalStateException("component " + name() + " serves HTTP routes: it needs a process with an "
          + "HTTP edge (dev.impipe.edge.app.PipelineRuntime)");
    }
    start(edge);
  }
}
