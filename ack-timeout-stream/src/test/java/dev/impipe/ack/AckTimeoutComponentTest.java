package dev.impipe.ack;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.app.PipelineComponent;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

class AckTimeoutComponentTest {

  @Test
  void bimLocalFindsTheComponentThroughTheServiceLoader() {
    assertThat(ServiceLoader.load(PipelineComponent.class).stream().map(ServiceLoader.Provider::get))
        .anySatisfy(c -> {
          assertThat(c).isInstanceOf(AckTimeoutComponent.class);
          assertThat(c.name()).isEqualTo("ack-timeout");
        });
  }
}
