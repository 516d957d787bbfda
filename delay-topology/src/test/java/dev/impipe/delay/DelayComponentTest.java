package dev.impipe.delay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.impipe.runtime.app.PipelineComponent;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

class DelayComponentTest {

  @Test
  void bin_im_localFindsTheDelayComponent() {
    assertThat(ServiceLoader.load(PipelineComponent.class).stream().map(ServiceLoader.Provider::get))
        .filteredOn(c -> c instanceof DelayComponent)
        .singleElement()
        .extracting(PipelineComponent::name).isEqualTo("delay");
  }
}
